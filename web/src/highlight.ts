/**
 * Code highlighting for Streamdown: Shiki's core with its JavaScript regex engine and the
 * languages agents mostly write, each loaded when a block first asks for it (Shiki too). Streamdown's own
 * `@streamdown/code` loads every language Shiki has, which the build turns into 300 files and
 * 12 MB; these fifteen are a few hundred KB (docs/decisions/0360-answers-rendered-by-streamdown.md).
 */
import type { HighlighterCore, LanguageRegistration } from 'shiki/core';
import type { CodeHighlighterPlugin, HighlightResult } from 'streamdown';

type Grammar = () => Promise<{ default: LanguageRegistration[] }>;

const grammars: Record<string, Grammar> = {
  bash: () => import('shiki/langs/bash.mjs'),
  css: () => import('shiki/langs/css.mjs'),
  diff: () => import('shiki/langs/diff.mjs'),
  go: () => import('shiki/langs/go.mjs'),
  html: () => import('shiki/langs/html.mjs'),
  javascript: () => import('shiki/langs/javascript.mjs'),
  json: () => import('shiki/langs/json.mjs'),
  jsx: () => import('shiki/langs/jsx.mjs'),
  markdown: () => import('shiki/langs/markdown.mjs'),
  python: () => import('shiki/langs/python.mjs'),
  rust: () => import('shiki/langs/rust.mjs'),
  sql: () => import('shiki/langs/sql.mjs'),
  tsx: () => import('shiki/langs/tsx.mjs'),
  typescript: () => import('shiki/langs/typescript.mjs'),
  yaml: () => import('shiki/langs/yaml.mjs'),
};

const aliases: Record<string, string> = {
  sh: 'bash',
  shell: 'bash',
  zsh: 'bash',
  console: 'bash',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  ts: 'typescript',
  mts: 'typescript',
  py: 'python',
  rs: 'rust',
  yml: 'yaml',
  md: 'markdown',
  patch: 'diff',
};

const themes = ['github-light', 'github-dark'] as const;

const canonical = (language: string): string | undefined => {
  const name = language.trim().toLowerCase();
  const known = aliases[name] ?? name;
  return grammars[known] === undefined ? undefined : known;
};

let highlighter: Promise<HighlighterCore> | undefined;
const loading = new Map<string, Promise<void>>();

function languageReady(language: string): Promise<HighlighterCore> {
  // Shiki itself is loaded with the first code block: a page without code never fetches it.
  highlighter ??= Promise.all([import('shiki/core'), import('shiki/engine/javascript')]).then(
    ([{ createHighlighterCore }, { createJavaScriptRegexEngine }]) =>
      createHighlighterCore({
        themes: [import('shiki/themes/github-light.mjs'), import('shiki/themes/github-dark.mjs')],
        langs: [],
        engine: createJavaScriptRegexEngine({ forgiving: true }),
      }),
  );
  return highlighter.then(async (core) => {
    let loaded = loading.get(language);
    if (loaded === undefined) {
      loaded = grammars[language]!().then((grammar) => core.loadLanguage(grammar.default));
      loading.set(language, loaded);
    }
    await loaded;
    return core;
  });
}

/** Finished blocks only: a block still streaming changes with its next token. */
const finishedResults = new Map<string, HighlightResult>();
const remembered = 200;

export const codeHighlighter: CodeHighlighterPlugin = {
  name: 'shiki',
  type: 'code-highlighter',
  getSupportedLanguages: () => Object.keys(grammars),
  getThemes: () => [...themes],
  supportsLanguage: (language) => canonical(language) !== undefined,
  highlight({ code, language, isIncomplete = false }, callback) {
    const name = canonical(language);
    if (name === undefined) return null;
    const key = `${name}\n${code}`;
    const known = finishedResults.get(key);
    if (known !== undefined) return known;
    languageReady(name).then(
      (core) => {
        const result = core.codeToTokens(code, {
          lang: name,
          themes: { light: themes[0], dark: themes[1] },
        }) as HighlightResult;
        if (!isIncomplete) {
          if (finishedResults.size >= remembered)
            finishedResults.delete(finishedResults.keys().next().value!);
          finishedResults.set(key, result);
        }
        callback?.(result);
      },
      // A grammar that fails to load leaves the block as plain code, which is still readable.
      () => undefined,
    );
    return null;
  },
};
