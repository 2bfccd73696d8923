import { type Context, endSpan, SpanKind, startSpan } from '@app/observability';

export interface BatchedCallsOptions<Item, Result> {
  /** The statement's name: of each batch's span (and of its metrics, where the caller keeps them). */
  name: string;
  /** Batches running at once; what arrives meanwhile waits for the next free one. */
  concurrency: number;
  /** The most items one batch takes. */
  maxBatch: number;
  /** Runs a batch: the result of each item, in the items' order. */
  run: (items: Item[]) => Promise<Result[]>;
  /**
   * Items with the same key never share a batch nor run at the same time: the next one waits for
   * the previous one's batch to end, so items of one key run in the order they came.
   */
  key?: (item: Item) => string;
  /** Told the size of every batch run (for metrics). */
  onBatch?: (size: number) => void;
  /** Told when a batch of several items failed and is run again one item per batch. */
  onSplit?: () => void;
}

interface Waiting<Item, Result> {
  item: Item;
  /** The caller's trace context: the batch's span is linked to every one it served. */
  context: Context | undefined;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs concurrent calls in shared batches (group commit, and its counterpart for reads): what a
 * round trip and a statement cost whatever their size is then paid once per batch. Nothing waits
 * for a batch to fill: a call starts at once while fewer than `concurrency` batches run, and the
 * calls that arrive meanwhile go together into the next free one, so a quiet service answers as
 * soon as before and a busy one batches by itself.
 *
 * A batch that fails fails all its calls, whatever the cause (one bad item can fail a whole
 * statement): each is then run again in a batch of its own, so every call gets the outcome it
 * would have had alone.
 */
export class BatchedCalls<Item, Result> {
  private readonly waiting: Array<Waiting<Item, Result>> = [];
  /** Keys with an item in a running batch. */
  private readonly busy = new Set<string>();
  private running = 0;

  constructor(private readonly options: BatchedCallsOptions<Item, Result>) {}

  /** Runs `item` in the next batch; `trace`: the caller's trace context (the command's span's). */
  call(item: Item, trace?: Context): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, context: trace, resolve, reject });
      this.startBatches();
    });
  }

  private startBatches(): void {
    while (this.running < this.options.concurrency) {
      const batch = this.nextBatch();
      if (batch.length === 0) return;
      this.running++;
      void this.runBatch(batch).finally(() => {
        this.running--;
        if (this.options.key) for (const { item } of batch) this.busy.delete(this.options.key(item));
        this.startBatches();
      });
    }
  }

  /** Waiting calls in arrival order, up to the batch size, one per key and none of a busy key. */
  private nextBatch(): Array<Waiting<Item, Result>> {
    const { key, maxBatch } = this.options;
    if (!key) return this.waiting.splice(0, maxBatch);
    const batch: Array<Waiting<Item, Result>> = [];
    for (let i = 0; i < this.waiting.length && batch.length < maxBatch;) {
      const itemKey = key(this.waiting[i].item);
      if (this.busy.has(itemKey)) {
        i++;
        continue;
      }
      this.busy.add(itemKey);
      batch.push(...this.waiting.splice(i, 1));
    }
    return batch;
  }

  /**
   * One span per batch (docs/operations.md "Tracing"): a child of its first call's span, linked to
   * the span of every call it served, so each command's trace shows the statement that did its work.
   */
  private async runBatch(batch: Array<Waiting<Item, Result>>): Promise<void> {
    this.options.onBatch?.(batch.length);
    const span = startSpan(this.options.name, {
      kind: SpanKind.INTERNAL,
      parent: batch[0].context,
      links: batch.flatMap((waiting) => waiting.context ?? []),
      attributes: { 'app.batch.size': batch.length },
    });
    try {
      const results = await this.options.run(batch.map((waiting) => waiting.item));
      endSpan(span);
      batch.forEach((waiting, index) => waiting.resolve(results[index]));
    } catch (error) {
      endSpan(span, error);
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      this.options.onSplit?.();
      await Promise.all(batch.map((waiting) => this.runBatch([waiting])));
    }
  }
}
