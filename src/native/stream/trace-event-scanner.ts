// An incremental reader for Chrome Trace Event JSON: text goes in chunk by chunk, and each element of the
// `traceEvents` array (or of a bare top-level array) comes out as a parsed value, so a trace far larger than a
// string can hold is read with memory bounded by its largest single event. Other top-level keys (Kineto's
// distributedInfo, deviceProperties) are parsed whole when they are small and skipped when they are not.
import { MeasurementParseError } from '../import/model';

/** One event larger than this is not a trace event; refusing it bounds memory. */
export const MAX_EVENT_CHARS = 4 * 1024 * 1024;

export interface ScannerSink {
  event(value: unknown): void;
  /** A cheap look at an event's text before it is parsed; events it refuses are skipped without parsing. */
  wants?(text: string): boolean;
  /** A top-level key other than traceEvents, with its parsed value (omitted when larger than MAX_EVENT_CHARS). */
  metadata?(key: string, value: unknown): void;
}

type Top = 'unknown' | 'array' | 'object';

/** Characters the scanner stops at outside strings; everything else is skipped in one jump. Inside an event,
 * commas and colons do not matter, so the scanner jumps further there. */
const STRUCTURE = /[{}[\]",:\n]/g;
const NESTED_STRUCTURE = /[{}[\]"\n]/g;
const STRING_END = /["\\\n]/g;

export class TraceEventScanner {
  private top: Top = 'unknown';
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** At depth 1 of a top-level object: whether the next string is a key, and the last key read. */
  private expectKey = false;
  private key = '';
  private keyParts: string[] | undefined;
  /** The depth at which the value being captured started, and its text so far. */
  private captureDepth = -1;
  private captureKind: 'event' | 'metadata' = 'event';
  private captured: string[] = [];
  private capturedChars = 0;
  private captureLine = 1;
  private captureColumn = 1;
  private oversized = false;
  private line = 1;
  private lineStart = 0;
  private consumed = 0;
  private sawEvents = false;
  events = 0;

  constructor(
    private readonly sink: ScannerSink,
    private readonly fileName?: string,
  ) {}

  private fail(message: string, line = this.line, column = 1): never {
    throw new MeasurementParseError(message, line, column, this.fileName);
  }

  push(chunk: string): void {
    let i = 0;
    let captureFrom = this.captureDepth >= 0 ? 0 : -1;
    while (i < chunk.length) {
      if (this.inString) {
        if (this.escaped) {
          // The previous chunk ended on a backslash: this chunk's first character is the escaped one.
          this.escaped = false;
          if (this.keyParts) this.keyParts.push(chunk[i]);
          i++;
          continue;
        }
        STRING_END.lastIndex = i;
        const m = STRING_END.exec(chunk);
        if (!m) {
          if (this.keyParts) this.keyParts.push(chunk.slice(i));
          break;
        }
        const at = m.index;
        const ch = chunk[at];
        if (ch === '\\') {
          if (at + 1 < chunk.length) {
            if (this.keyParts) this.keyParts.push(chunk.slice(i, at + 2));
            i = at + 2;
          } else {
            this.escaped = true;
            if (this.keyParts) this.keyParts.push(chunk.slice(i));
            i = chunk.length;
          }
          continue;
        }
        if (ch === '\n')
          this.fail(
            'unterminated string (strings cannot span lines)',
            this.line,
            this.consumed + at - this.lineStart + 1,
          );
        if (this.keyParts) {
          this.keyParts.push(chunk.slice(i, at));
          this.key = this.keyParts.join('');
          this.keyParts = undefined;
        }
        this.inString = false;
        i = at + 1;
        continue;
      }
      const pattern = this.depth > 1 ? NESTED_STRUCTURE : STRUCTURE;
      pattern.lastIndex = i;
      const m = pattern.exec(chunk);
      if (!m) {
        if (this.top === 'unknown' && /\S/.test(chunk.slice(i))) this.notATrace(chunk.slice(i).trim()[0]);
        break;
      }
      const at = m.index;
      if (this.top === 'unknown' && /\S/.test(chunk.slice(i, at))) this.notATrace(chunk.slice(i, at).trim()[0]);
      const ch = chunk[at];
      i = at + 1;
      switch (ch) {
        case '\n':
          this.line++;
          this.lineStart = this.consumed + i;
          break;
        case '"':
          if (this.top === 'unknown') this.notATrace('"');
          this.inString = true;
          if (this.top === 'object' && this.depth === 1 && this.expectKey) {
            this.keyParts = [];
            this.expectKey = false;
          }
          break;
        case ':':
          break;
        case ',':
          if (this.top === 'object' && this.depth === 1) this.expectKey = true;
          break;
        case '{':
        case '[': {
          if (this.top === 'unknown') {
            this.top = ch === '[' ? 'array' : 'object';
            this.sawEvents = ch === '[';
            this.expectKey = ch === '{';
          }
          const eventsDepth = this.top === 'array' ? 1 : this.key === 'traceEvents' ? 2 : -1;
          if (this.captureDepth < 0 && this.depth === eventsDepth && this.depth >= 1) {
            this.startCapture('event', at);
            captureFrom = at;
          } else if (this.captureDepth < 0 && this.top === 'object' && this.depth === 1 && this.key !== 'traceEvents') {
            this.startCapture('metadata', at);
            captureFrom = at;
          }
          if (this.top === 'object' && this.depth === 1 && this.key === 'traceEvents' && ch === '[')
            this.sawEvents = true;
          this.depth++;
          if (this.depth === 1 && this.top === 'object') this.expectKey = true;
          break;
        }
        case '}':
        case ']':
          this.depth--;
          if (this.depth < 0) this.fail(`unexpected '${ch}'`, this.line, this.consumed + at - this.lineStart + 1);
          if (this.captureDepth >= 0 && this.depth === this.captureDepth) {
            this.appendCapture(chunk.slice(captureFrom, i));
            captureFrom = -1;
            this.finishCapture();
          }
          break;
      }
    }
    if (captureFrom >= 0 && this.captureDepth >= 0) this.appendCapture(chunk.slice(captureFrom));
    this.consumed += chunk.length;
  }

  private notATrace(first: string | undefined): never {
    this.fail(`not Chrome Trace Event JSON: it starts with '${first ?? ''}', not '{' or '['`, this.line, 1);
  }

  private startCapture(kind: 'event' | 'metadata', at: number): void {
    this.captureDepth = this.depth;
    this.captureKind = kind;
    this.captured = [];
    this.capturedChars = 0;
    this.oversized = false;
    this.captureLine = this.line;
    this.captureColumn = this.consumed + at - this.lineStart + 1;
  }

  private appendCapture(text: string): void {
    if (this.oversized) return;
    this.capturedChars += text.length;
    if (this.capturedChars > MAX_EVENT_CHARS) {
      if (this.captureKind === 'event')
        this.fail(
          `an event longer than ${MAX_EVENT_CHARS / 1024 / 1024} MiB; this is not a trace event`,
          this.captureLine,
          this.captureColumn,
        );
      this.oversized = true;
      this.captured = [];
      return;
    }
    this.captured.push(text);
  }

  private finishCapture(): void {
    const kind = this.captureKind;
    const text = this.captured.join('');
    const [line, column] = [this.captureLine, this.captureColumn];
    this.captureDepth = -1;
    this.captured = [];
    if (this.oversized) return;
    if (kind === 'event' && this.sink.wants && !this.sink.wants(text)) {
      this.events++;
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.fail(
        `invalid JSON in ${kind === 'event' ? 'a trace event' : `"${this.key}"`}: ${(error as Error).message.replace(/ in JSON at position \d+.*$/, '')}`,
        line,
        column,
      );
    }
    if (kind === 'event') {
      this.events++;
      this.sink.event(value);
    } else {
      this.sink.metadata?.(this.key, value);
    }
  }

  /** Call after the last chunk: checks that the document was complete and held a trace. */
  end(): void {
    if (this.inString || this.depth !== 0)
      this.fail(
        'the trace ends in the middle of the JSON (truncated file?)',
        this.line,
        this.consumed - this.lineStart + 1,
      );
    if (!this.sawEvents)
      this.fail('not a trace: expected Chrome Trace Event JSON (a "traceEvents" array or an array of events)', 1, 1);
  }
}
