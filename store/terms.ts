/**
 * What an item is found by in a text search: the words of its value's text, at the paths its
 * `index` names (LangGraph's `index`: null for the default, the whole value; `false` for none;
 * a list of field paths such as `title`, `author.name`, `tags[*]` or `$`), and the words of a
 * query. Words are lower-cased letters and digits, as any full-text index splits them.
 */

/** Words kept per item: a value past this is still stored whole, and found by its first words. */
export const maxTermsPerItem = 4_000;
/** Longer words are cut: nobody types one, and a blob of base64 would crowd the index. */
const maxWordChars = 64;

/** The lower-cased words of `text`, in order. */
export function wordsOf(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '')
    .map((word) => word.slice(0, maxWordChars));
}

/** Every string and number under `value`, depth first. */
function textsUnder(value: unknown, found: string[]): void {
  if (typeof value === 'string') found.push(value);
  else if (typeof value === 'number' || typeof value === 'boolean') found.push(String(value));
  else if (Array.isArray(value)) for (const item of value) textsUnder(item, found);
  else if (typeof value === 'object' && value !== null)
    for (const child of Object.values(value)) textsUnder(child, found);
}

/** `a.b[*].c` → `['a', 'b', '*', 'c']`; `[0]` selects one element. */
const segmentsOf = (path: string): string[] =>
  path
    .replace(/\[(\*|\d+)\]/g, '.$1')
    .split('.')
    .filter((segment) => segment !== '' && segment !== '$');

/** The values at `path` in `value` (several when it goes through `[*]`). */
function valuesAt(value: unknown, segments: readonly string[]): unknown[] {
  let current: unknown[] = [value];
  for (const segment of segments) {
    const next: unknown[] = [];
    for (const node of current) {
      if (segment === '*' && Array.isArray(node)) next.push(...(node as unknown[]));
      else if (Array.isArray(node) && /^\d+$/.test(segment)) next.push(node[Number(segment)]);
      else if (
        typeof node === 'object' &&
        node !== null &&
        !Array.isArray(node) &&
        Object.hasOwn(node, segment)
      )
        next.push((node as Record<string, unknown>)[segment]);
    }
    current = next;
  }
  return current;
}

/** What an item is indexed by, as LangGraph's `index`: field paths, `false` for none, `null` for the whole value. */
export type IndexFields = false | readonly string[] | null;

/** The texts at the paths `index` names (the whole value for null); none when it is false. */
export function indexedTexts(value: Record<string, unknown>, index: IndexFields): string[] {
  if (index === false) return [];
  const texts: string[] = [];
  if (index === null) textsUnder(value, texts);
  else
    for (const path of index) for (const found of valuesAt(value, segmentsOf(path))) textsUnder(found, texts);
  return texts;
}

/** The words an item is indexed under; none when `index` is false. */
export function indexedWords(value: Record<string, unknown>, index: IndexFields): string[] {
  return indexedTexts(value, index).flatMap(wordsOf).slice(0, maxTermsPerItem);
}
