/**
 * A2A push notification configs as a task's caller sends them and as Keel keeps them (decision
 * 0485): checked here, stored on the thread's workflow beside the run.
 */
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushConfig } from '../../common/a2a-push';
import { idPattern, limits } from '../../common/limits';
import { invalidParams, shown } from './errors';

/** At most this many characters of a push config's token or credentials. */
const maxSecretChars = 1_000;

/** A stored config as A2A's `TaskPushNotificationConfig`. */
export const configOf = (taskId: string, config: PushConfig): TaskPushNotificationConfig => ({
  tenant: '',
  id: config.id,
  taskId,
  url: config.url,
  token: config.token ?? '',
  authentication: config.authentication,
});

/**
 * The config to keep for `params`, or -32602 naming what is wrong: an id of letters, digits, `-`
 * and `_` (a new one when none is given), an http(s) URL, and a token and credentials of one line
 * each. The URL's address is checked apart, as a webhook's is.
 */
export function pushConfigOf(params: TaskPushNotificationConfig, newId: () => string): PushConfig {
  const id = params.id === '' ? newId() : params.id;
  if (id.length > limits.maxIdChars || !idPattern.test(id))
    throw invalidParams(`id ${shown(id)}: letters, digits, '-' and '_'`);
  if (!/^https?:\/\//i.test(params.url) || !URL.canParse(params.url))
    throw invalidParams('url: an http or https URL');
  if (params.token.length > maxSecretChars)
    throw invalidParams(`token: at most ${maxSecretChars} characters`);
  const authentication = params.authentication;
  if (
    authentication !== undefined &&
    (authentication.scheme === '' ||
      authentication.credentials === '' ||
      /[\r\n]/.test(authentication.scheme + authentication.credentials) ||
      authentication.scheme.length + authentication.credentials.length > maxSecretChars)
  )
    throw invalidParams('authentication: a scheme and credentials, one line each');
  if (/[\r\n]/.test(params.token)) throw invalidParams('token: one line');
  return {
    id,
    url: params.url,
    ...(params.token === '' ? {} : { token: params.token }),
    ...(authentication === undefined ? {} : { authentication: { ...authentication } }),
  };
}
