import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Runs long synchronous tasks (parsing a megabyte body) one at a time, each in an event-loop
 * turn of its own, with I/O polled before each: however many are queued, the event loop
 * serves other connections between any two, so a burst of them delays a short request by one
 * task, not by all of them, and their results are not all held at once. A task's caller may
 * take the next turn (awaiting nextTurn) for what it does with the result: the next task
 * starts a turn after that.
 */
export class SerialTurns {
  private tail: Promise<unknown> = Promise.resolve();

  /** task's result, computed once every task queued before it has run, in a later turn. */
  run<T>(task: () => T): Promise<T> {
    const result = this.tail.then(async () => {
      await nextTurn();
      return task();
    });
    // A failed task does not stop the ones after it; a turn is left for its caller.
    this.tail = result.then(
      () => nextTurn(),
      () => nextTurn(),
    );
    return result;
  }
}
