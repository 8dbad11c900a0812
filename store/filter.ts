/**
 * A search's `filter` on value fields, as LangGraph's stores read it: each top-level key of the
 * filter names a field of the value; a plain value must equal it (objects compared field by
 * field, recursively), an object of operators compares (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`,
 * `$lte`). Values are sealed at rest, so the filter runs here, on opened values.
 */
import { isDeepStrictEqual } from 'node:util';

export const filterOperators = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte'] as const;
const operators = new Set<string>(filterOperators);

/** The first operator in `filter` that is not one of `filterOperators`, if any. */
export function unknownOperator(filter: unknown): string | undefined {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) return undefined;
  for (const [name, child] of Object.entries(filter)) {
    if (name.startsWith('$') && !operators.has(name)) return name;
    const inner = unknownOperator(child);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

const isOperatorObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).some((key) => key.startsWith('$'));

/** Orders numbers by value and strings by code point; anything else does not compare. */
function compare(left: unknown, right: unknown): number | undefined {
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  return undefined;
}

function applyOperator(value: unknown, operator: string, operand: unknown): boolean {
  if (operator === '$eq') return isDeepStrictEqual(value, operand);
  if (operator === '$ne') return !isDeepStrictEqual(value, operand);
  const order = compare(value, operand);
  if (order === undefined) return false;
  if (operator === '$gt') return order > 0;
  if (operator === '$gte') return order >= 0;
  if (operator === '$lt') return order < 0;
  return order <= 0;
}

function matchesValue(value: unknown, condition: unknown): boolean {
  if (isOperatorObject(condition))
    return Object.entries(condition).every(([operator, operand]) => applyOperator(value, operator, operand));
  if (typeof condition === 'object' && condition !== null && !Array.isArray(condition)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    return Object.entries(condition).every(([field, inner]) =>
      matchesValue((value as Record<string, unknown>)[field], inner),
    );
  }
  return isDeepStrictEqual(value, condition);
}

/** True when `value` passes every condition of `filter`. */
export function matchesFilter(value: Record<string, unknown>, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([field, condition]) => matchesValue(value[field], condition));
}
