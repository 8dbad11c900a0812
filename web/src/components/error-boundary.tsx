/** A fault in the page itself is said in words, with a way back, never as a blank page or a stack. */
import { Component, type ReactNode } from 'react';

export class ErrorBoundary extends Component<{ children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    return (
      <div className="notice notice-error" role="alert">
        The page ran into a problem it cannot show. <a href={window.location.href}>Reload</a> to go on: the
        thread is kept.
      </div>
    );
  }
}
