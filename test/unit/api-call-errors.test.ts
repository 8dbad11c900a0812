import {
  ApiCallError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  GoneError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  apiCallErrorOf,
} from '../../common/api-call-errors';

/** Keel's error shape, as api/errors.ts sends it. */
const keelBody = (type: string, code: string, message: string, param?: string) =>
  JSON.stringify({
    error: { type, code, message, ...(param === undefined ? {} : { param }) },
    detail: message,
  });

describe("the clients' one reading of the API's errors", () => {
  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [410, GoneError],
    [422, UnprocessableEntityError],
    [429, RateLimitError],
    [500, InternalServerError],
    [503, InternalServerError],
    [405, ApiCallError],
    [413, ApiCallError],
  ])('makes a %i answer an error of its status family', (status, family) => {
    const error = apiCallErrorOf({ status, text: keelBody('some_error', 'some_code', 'it went wrong') });
    expect(error).toBeInstanceOf(family);
    expect(error).toBeInstanceOf(ApiCallError);
    expect(error.constructor).toBe(family);
    expect(error.status).toBe(status);
  });

  it("keeps the API's sentence, code, type and field, and says the status after the sentence", () => {
    const error = apiCallErrorOf({
      status: 422,
      statusText: 'Unprocessable Entity',
      text: keelBody('invalid_request_error', 'validation_error', 'body.input: required', 'input'),
    });
    expect(error.message).toBe('body.input: required (HTTP 422 validation_error)');
    expect(error.detail).toBe('body.input: required');
    expect(error).toMatchObject({ code: 'validation_error', type: 'invalid_request_error', param: 'input' });
    expect(error.name).toBe('ApiCallError');
  });

  it('reads the plainer shape, a code in `error` and the sentence in `message`', () => {
    const error = apiCallErrorOf({ status: 404, text: '{"error":"not_found","message":"no such run"}' });
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ code: 'not_found', detail: 'no such run', type: undefined });
    expect(error.message).toBe('no such run (HTTP 404 not_found)');
  });

  it("says only the status line for a body that is not Keel's (a proxy's page)", () => {
    const proxied = apiCallErrorOf({ status: 502, statusText: 'Bad Gateway', text: '<html>oops</html>' });
    expect(proxied).toBeInstanceOf(InternalServerError);
    expect(proxied).toMatchObject({ detail: '502 Bad Gateway', code: undefined });
    expect(proxied.message).toBe('502 Bad Gateway (HTTP 502)');
    expect(apiCallErrorOf({ status: 500, text: '' }).detail).toBe('the API answered 500');
    expect(apiCallErrorOf({ status: 500, text: '"a string"' }).detail).toBe('the API answered 500');
  });
});
