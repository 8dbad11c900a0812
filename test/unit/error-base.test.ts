import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import ts from 'typescript';
import { ExtensionsConfigError } from '../../activities/extensions/config';
import { FileRefused, WorkspaceViolation } from '../../activities/errors';
import { ApiError } from '../../api/errors';
import {
  ApiCallError,
  ApiConnectionError,
  NotFoundError,
  RateLimitError,
} from '../../common/api-call-errors';
import { KeelError } from '../../common/errors';
import { EncryptionKeyUnknownError, PayloadDecryptionError } from '../../codec/errors';
import type * as codecErrors from '../../codec/errors';
import { ClusterStopped } from '../../launch/cluster/temporal-cluster';
import { PostgresUnavailable } from '../../launch/cluster/postgres';
import { PortTaken } from '../../launch/free-ports';
import { GoBuildUnavailable } from '../../launch/go-install';
import { TemporalCliUnavailable } from '../../launch/temporal-cli';
import { ConfigError } from '../../platform/config';
import { RefusedUrl, UnresolvedHost } from '../../platform/outbound-address';
import { StoreError } from '../../store/errors';
import type * as storeErrors from '../../store/errors';

/**
 * Every exported error class Keel defines, one instance each, with the name it must keep. Not
 * here: `ChatError` (cli/chat.ts loads ora, an ES module this jest does not load) and the two
 * module-private classes (`HandlerFailed`, the network proxy's `Refused`); tsc sees them extend
 * KeelError.
 */
const instances: [string, Error, string][] = [
  ['PayloadDecryptionError', new PayloadDecryptionError('cannot decrypt', 'k1'), 'cannot decrypt'],
  [
    'EncryptionKeyUnknownError',
    new EncryptionKeyUnknownError('k0', ['k1']),
    'this data was encrypted with key "k0", which is not among the configured keys (k1); add "k0" back to KEEL_ENCRYPTION_KEYS to read it',
  ],
  ['ConfigError', new ConfigError('KEEL_API_PORT: not a port'), 'KEEL_API_PORT: not a port'],
  ['RefusedUrl', new RefusedUrl('refused'), 'refused'],
  ['UnresolvedHost', new UnresolvedHost('no such host'), 'no such host'],
  ['ApiError', new ApiError(404, 'thread_not_found', 'thread t not found'), 'thread t not found'],
  ['ApiCallError', new ApiCallError('failed (HTTP 418)', 418), 'failed (HTTP 418)'],
  ['ExtensionsConfigError', new ExtensionsConfigError('bad file'), 'bad file'],
  [
    'WorkspaceViolation',
    new WorkspaceViolation('../x', 'leaves the workspace'),
    `path "../x" leaves the workspace; tools only reach files inside the conversation's workspace`,
  ],
  ['FileRefused', new FileRefused('a.txt', 'is not a regular file'), 'a.txt is not a regular file'],
  ['StoreError', new StoreError(422, 'invalid_key', 'bad key'), 'bad key'],
  ['TemporalCliUnavailable', new TemporalCliUnavailable('no cli'), 'no cli'],
  [
    'PortTaken',
    new PortTaken({ host: '127.0.0.1', port: 8080, whose: "The API's port", remedy: 'stop it' }),
    "The API's port 8080 on 127.0.0.1 is in use: stop it.",
  ],
  ['GoBuildUnavailable', new GoBuildUnavailable('no go'), 'no go'],
  ['PostgresUnavailable', new PostgresUnavailable('no initdb'), 'no initdb'],
  ['ClusterStopped', new ClusterStopped('stopped'), 'stopped'],
];

describe('one error base for every error Keel defines', () => {
  it.each(instances)('%s extends KeelError and keeps its name and message', (name, error, message) => {
    expect(error).toBeInstanceOf(KeelError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.message).toBe(message);
    expect(error.constructor.name).toBe(name);
  });

  it('tells unrelated classes apart, and a parent from its subclass', () => {
    const decryption = new PayloadDecryptionError('x', undefined);
    const unknownKey = new EncryptionKeyUnknownError('k0', []);
    expect(unknownKey).toBeInstanceOf(PayloadDecryptionError);
    expect(decryption).not.toBeInstanceOf(EncryptionKeyUnknownError);
    expect(new StoreError(500, 'x', 'x')).not.toBeInstanceOf(ApiError);
    expect(new RefusedUrl('x')).not.toBeInstanceOf(UnresolvedHost);
    expect(new NotFoundError('x', 404)).toBeInstanceOf(ApiCallError);
    expect(new NotFoundError('x', 404)).not.toBeInstanceOf(RateLimitError);
    expect(new ApiConnectionError('x')).not.toBeInstanceOf(NotFoundError);
    expect(new Error('plain')).not.toBeInstanceOf(KeelError);
    expect(null).not.toBeInstanceOf(KeelError);
  });

  it('recognises an error made by a second copy of the modules (another bundle)', () => {
    let copy: { codec: typeof codecErrors; store: typeof storeErrors };
    jest.isolateModules(() => {
      copy = {
        codec: jest.requireActual<typeof codecErrors>('../../codec/errors'),
        store: jest.requireActual<typeof storeErrors>('../../store/errors'),
      };
    });
    const other = copy!;
    expect(other.codec.EncryptionKeyUnknownError).not.toBe(EncryptionKeyUnknownError);
    const theirs = new other.codec.EncryptionKeyUnknownError('k0', []);
    expect(theirs).toBeInstanceOf(EncryptionKeyUnknownError);
    expect(theirs).toBeInstanceOf(PayloadDecryptionError);
    expect(theirs).toBeInstanceOf(KeelError);
    expect(theirs).not.toBeInstanceOf(StoreError);
    expect(new PayloadDecryptionError('x', undefined)).toBeInstanceOf(other.codec.PayloadDecryptionError);
    expect(new PayloadDecryptionError('x', undefined)).not.toBeInstanceOf(
      other.codec.EncryptionKeyUnknownError,
    );
    expect(new StoreError(503, 'x', 'x')).toBeInstanceOf(other.store.StoreError);
  });

  it('recognises an error made in another realm (a vm context, as workflow code runs in)', () => {
    const source = readFileSync(path.join(__dirname, '../../common/errors.ts'), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    });
    const realm = vm.createContext({ exports: {} });
    vm.runInContext(outputText, realm);
    const script = `
      class StoreError extends exports.KeelError {}
      class Unrelated extends exports.KeelError {}
      ({ store: new StoreError('made elsewhere'), unrelated: new Unrelated('x'), KeelError: exports.KeelError, StoreError });
    `;
    const made = vm.runInContext(script, realm) as {
      store: unknown;
      unrelated: unknown;
      KeelError: typeof KeelError;
      StoreError: typeof KeelError;
    };
    expect(made.store instanceof Error).toBe(false);
    expect(made.store).toBeInstanceOf(StoreError);
    expect(made.store).toBeInstanceOf(KeelError);
    expect(made.unrelated).not.toBeInstanceOf(StoreError);
    expect(new StoreError(422, 'x', 'x')).toBeInstanceOf(made.StoreError);
    expect(new ApiError(404, 'x', 'x')).not.toBeInstanceOf(made.StoreError);
    expect(new ApiError(404, 'x', 'x')).toBeInstanceOf(made.KeelError);
  });
});
