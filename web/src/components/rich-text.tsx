/** A model's text: paragraphs as written, fenced code blocks (```) as code. */
const fence = /```[^\n]*\n?([\s\S]*?)(?:```|$)/g;

export function RichText({ text, className }: { text: string; className?: string }) {
  const parts: Array<{ code: boolean; text: string }> = [];
  let at = 0;
  for (const match of text.matchAll(fence)) {
    if (match.index > at) parts.push({ code: false, text: text.slice(at, match.index) });
    parts.push({ code: true, text: (match[1] ?? '').replace(/\n$/, '') });
    at = match.index + match[0].length;
  }
  if (at < text.length) parts.push({ code: false, text: text.slice(at) });
  return (
    <div className={className}>
      {parts.map((part, index) =>
        part.code ? (
          <pre key={index}>
            <code>{part.text}</code>
          </pre>
        ) : part.text.trim() === '' ? null : (
          <p key={index}>{part.text.trim()}</p>
        ),
      )}
    </div>
  );
}
