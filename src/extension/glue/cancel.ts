// The error long work throws when the user cancels it. Pure, so the worker client and the tests use it without
// VS Code; commands recognise it (by name too, across bundles) and log it instead of showing an error.
export class CancelledError extends Error {
  constructor() {
    super('Cancelled.');
    this.name = 'CancelledError';
  }
}
