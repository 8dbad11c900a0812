/**
 * Libraries every workflow of a worker thread shares instead of evaluating its own copy (decision
 * 0280). Temporal's reusable V8 context evaluates each module of the bundle again for each workflow
 * it creates, and keeps that copy as long as the workflow is cached: zod alone cost an idle cached
 * conversation ~510 KiB of heap, the semantic conventions ~70 KiB. Modules preloaded here are
 * evaluated once, before any workflow exists, and frozen by the SDK. Only stateless libraries
 * belong here: OpenTelemetry's API holds the tracer provider each workflow registers, and its SDK
 * reads the workflow's `performance` as it loads, so they stay per workflow. (The namespace imports
 * keep the modules: with `sideEffects: false` a bare `import 'zod'` would be dropped.)
 */
import { SemanticAttributes, SemanticResourceAttributes } from '@opentelemetry/semantic-conventions';
import { z } from 'zod';

/**
 * One export of each module the bundle holds of these libraries, so that the preload evaluates them
 * all (webpack evaluates a `sideEffects: false` module only for an export someone uses).
 */
export const sharedModules = [
  z.object,
  z.lt,
  z.iso,
  z.fromJSONSchema,
  SemanticAttributes,
  SemanticResourceAttributes,
];

/**
 * zod writes its default locale into its global config when the first schema is built, and its
 * memoizer when the first container (an object, an array, …) is; the SDK freezes what a preload
 * loaded, so a workflow building either first found the config frozen ("Cannot add property
 * localeError", "… memoizer"). So the first of both is built here.
 */
export const firstSchema = z.object({ first: z.array(z.string()) });
