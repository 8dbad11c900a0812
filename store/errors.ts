/**
 * The store's one error: what a caller did wrong or what went wrong underneath, with the HTTP
 * status and code the Store API answers it with (decision 0435). The API maps it to its error
 * shape; a memory tool gives its message to the model.
 */
import { KeelError } from '../common/errors';

export class StoreError extends KeelError {
  override readonly name = 'StoreError';
  constructor(
    readonly status: 422 | 500 | 503,
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}
