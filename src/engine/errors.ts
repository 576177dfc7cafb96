// The one error type the engine throws for impossible input (an unknown GPU, a fabric that cannot hold the
// requested GPUs, a negative bandwidth). Callers turn it into a one-line message; anything else is a bug.
export class EngineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EngineError';
  }
}
