/** The API token, when the API asks for one: kept in this browser's storage and nowhere else. */
import { useCallback, useState } from 'react';

const storageKey = 'keel.api-token';

export function useToken(): [string, (token: string) => void] {
  const [token, setToken] = useState(() => window.localStorage.getItem(storageKey) ?? '');
  const save = useCallback((next: string) => {
    const trimmed = next.trim();
    if (trimmed === '') window.localStorage.removeItem(storageKey);
    else window.localStorage.setItem(storageKey, trimmed);
    setToken(trimmed);
  }, []);
  return [token, save];
}
