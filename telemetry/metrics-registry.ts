/**
 * What the API's and the worker's metrics share: a registry of their own, metrics registered on it
 * by name, help and labels, the process's own metrics when it is served, and the refusals counter
 * both keep (the API counts runs refused at its door, the workers the rest, decision 0440).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export abstract class KeelRegistry {
  readonly registry = new Registry();
  readonly refusals = this.counter(
    'keel_refusals_total',
    'Runs refused for spend or concurrency, by reason (budget_exceeded, quota_exceeded, concurrency)',
    ['reason'],
  );

  /** With the process's own metrics (CPU, memory, event loop lag) when this registry is served. */
  withProcessMetrics(): this {
    collectDefaultMetrics({ register: this.registry });
    return this;
  }

  protected counter<Label extends string>(
    name: string,
    help: string,
    labelNames: readonly Label[],
  ): Counter<Label> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  protected histogram<Label extends string>(
    name: string,
    help: string,
    labelNames: readonly Label[],
    buckets: number[],
  ): Histogram<Label> {
    return new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  protected gauge<Label extends string>(
    name: string,
    help: string,
    labelNames: readonly Label[],
  ): Gauge<Label> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }
}
