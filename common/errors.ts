/**
 * Keel's one error base. Every error class Keel defines extends `KeelError`, and `instanceof`
 * answers by a marker rather than by object identity: a class loaded twice (the workflow bundle
 * beside the worker's own modules, a second copy under jest's module registry, a vm context) is
 * still recognised, because its instances carry a registered symbol,
 * `Symbol.for('keel.error:<name>')`, that every realm and bundle shares.
 *
 * A class's marker name is its static `errorName` when it declares one, else its class name.
 * Code that a minifier renames (the web page's bundle) must declare `errorName`: minified class
 * names are neither stable nor unique.
 *
 * No Node API here: workflow code and the web page import it too.
 */

/** A class in `KeelError`'s family, as the marker sees it. */
interface ErrorClass {
  readonly name: string;
  readonly errorName?: string;
  readonly prototype: object;
}

/** The marker of `errorClass` itself (not inherited: a subclass is marked apart from its parent). */
function markerOf(errorClass: ErrorClass): symbol {
  const name = Object.hasOwn(errorClass, 'errorName') ? errorClass.errorName : errorClass.name;
  return Symbol.for(`keel.error:${name ?? ''}`);
}

export class KeelError extends Error {
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    // Marks the prototypes of new.target and each ancestor up to KeelError (once per class), so
    // an instance of a subclass is recognised as an instance of its parents too.
    for (
      let errorClass = new.target as ErrorClass;
      (errorClass as unknown) !== Error;
      errorClass = Object.getPrototypeOf(errorClass) as ErrorClass
    ) {
      const marker = markerOf(errorClass);
      if (!Object.hasOwn(errorClass.prototype, marker))
        Object.defineProperty(errorClass.prototype, marker, { value: true });
    }
  }

  static override [Symbol.hasInstance](this: ErrorClass, value: unknown): boolean {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[markerOf(this)] === true
    );
  }
}
