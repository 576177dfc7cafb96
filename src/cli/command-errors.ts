// The error every command throws for a bad flag or a bad input file: printed as `error: ...` lines, exit code 2.
import type { ConfigError } from '../config/positioned';

export class UsageError extends Error {
  /** Further problems of the same input, each printed as an `error:` line of its own after the message. */
  readonly more: readonly string[];

  constructor(message: string, more: readonly string[] = []) {
    super(message);
    this.more = more;
  }
}

/**
 * Every problem of a bad system or training file at once, one `file:line:col: message` line each, so a user fixes
 * them in one pass instead of one run per problem.
 */
export function configUsageError(error: ConfigError): UsageError {
  // One line per place: the schema validator can word one problem twice (a minimum, then the branch it failed).
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const issue of error.issues) {
    const place = `${error.file}:${issue.line}:${issue.column}`;
    if (seen.has(place)) continue;
    seen.add(place);
    lines.push(`${place}: ${issue.message}`);
  }
  const [first, ...rest] = lines;
  return new UsageError(first ?? error.toString(), rest);
}
