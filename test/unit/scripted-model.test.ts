import { planFromText, ScriptedModel } from '../../activities/model/scripted';

describe('the scripted model', () => {
  it('turns each tool line into a tool call, several lines into parallel calls', () => {
    const plan = planFromText(
      'please\nrun: ls -la\nread: notes.md\nwrite: out/a.txt: hello: world\ndelete: old.txt\nspawn: research X\ntool: custom {"a":1}',
    );
    expect(plan.calls).toEqual([
      { name: 'bash', input: { command: 'ls -la' } },
      { name: 'read_file', input: { path: 'notes.md' } },
      { name: 'write_file', input: { path: 'out/a.txt', content: 'hello: world' } },
      { name: 'delete_file', input: { path: 'old.txt' } },
      { name: 'spawn_agent', input: { task: 'research X' } },
      { name: 'custom', input: { a: 1 } },
    ]);
  });

  it('says plainly that it is not a real model when there is nothing to do', () => {
    const plan = planFromText('what is the meaning of life?');
    expect(plan.calls).toEqual([]);
    expect(plan.text).toContain('not a real model');
    expect(plan.text).toContain('what is the meaning of life?');
  });

  it('streams its text token by token, thinks for as long as asked, and is deterministic', async () => {
    const deltas: string[] = [];
    const request = {
      model: 'demo',
      system: 'sys',
      tools: [],
      maxTokens: 100,
      messages: [
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'think: 0.3\nrun: echo hi' }] },
      ],
      signal: new AbortController().signal,
      onTextDelta: (text: string) => deltas.push(text),
    };
    const started = Date.now();
    const first = await new ScriptedModel().complete(request);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const second = await new ScriptedModel().complete({ ...request, onTextDelta: () => {} });
    expect(first).toEqual(second);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe((first.content[0] as { text: string }).text);
    expect(first.stop_reason).toBe('tool_use');
    expect(first.usage.input_tokens).toBeGreaterThan(0);
  });

  it('stops thinking when the call is cancelled', async () => {
    const controller = new AbortController();
    const pending = new ScriptedModel().complete({
      model: 'demo',
      system: '',
      tools: [],
      maxTokens: 10,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'think: 30' }] }],
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('cancelled')), 50);
    await expect(pending).rejects.toThrow();
  });
});
