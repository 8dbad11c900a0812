/**
 * A model's text as GitHub-flavoured Markdown, rendered as it streams by Streamdown (made for
 * streamed model output: an unclosed fence, table or emphasis renders as what it will be, not as
 * raw source), with code highlighted by Shiki and a copy button on each block
 * (docs/decisions/0360-answers-rendered-by-streamdown.md). Nothing in it runs script: raw HTML
 * is sanitised, and only http(s), mailto and relative links stay links.
 */
import { codeHighlighter } from '../highlight';
import { Streamdown } from 'streamdown';

const plugins = { code: codeHighlighter };

export function RichText({
  text,
  className,
  streaming = false,
}: {
  text: string;
  className?: string;
  streaming?: boolean;
}) {
  return (
    <div className={className}>
      <Streamdown
        mode={streaming ? 'streaming' : 'static'}
        isAnimating={streaming}
        plugins={plugins}
        shikiTheme={['github-light', 'github-dark']}
        controls={{ code: { copy: true, download: false }, table: false, mermaid: false }}
        linkSafety={{ enabled: false }}
      >
        {text}
      </Streamdown>
    </div>
  );
}
