// Parses YAML or JSON config files keeping every node's position, and validates them against a JSON Schema with
// errors that point at a line and column. Every config reader in the project (system files, training configs)
// goes through here so that users see the same `file:line:col: message` errors everywhere.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import {
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  parseDocument as parseYamlDocument,
  type Document,
  type Node,
} from 'yaml';
import { closestMatch } from './did-you-mean';
import { findJsonSyntaxError } from './json-syntax';
import { limitViolations } from './limits';

/** Config files are small; anything bigger is a mistake or an attack, and is refused before parsing. */
export const MAX_CONFIG_BYTES = 1024 * 1024;
/** Deeper nesting than this is refused: no real config needs it, and hostile nesting can exhaust the parser. */
export const MAX_CONFIG_DEPTH = 64;
/** YAML aliases expanded per document; a "billion laughs" file needs far more than this to do harm. */
export const MAX_ALIAS_COUNT = 100;

export type ConfigPath = readonly (string | number)[];

export interface ConfigIssue {
  readonly message: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
  /** Where in the document, e.g. ['nic', 'gbps']. */
  readonly path: ConfigPath;
  /** A replacement for a misspelt key or value, when one is close. */
  readonly suggestion?: string;
  /** For a missing required key, its name. */
  readonly missingKey?: string;
}

/** A config file that cannot be used. Prints as `file:line:col: message`, the form editors and terminals link. */
export class ConfigError extends Error {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** Every problem found, the first of which is this error's own message. */
  readonly issues: readonly ConfigIssue[];

  constructor(file: string, issues: readonly ConfigIssue[]) {
    const first = issues[0] ?? { message: 'invalid config', line: 1, column: 1, path: [] };
    super(first.message);
    this.name = 'ConfigError';
    this.file = file;
    this.line = first.line;
    this.column = first.column;
    this.issues = issues.length > 0 ? issues : [first];
  }

  override toString(): string {
    return `${this.file}:${this.line}:${this.column}: ${this.message}`;
  }
}

/** A parsed config file: its plain value plus what is needed to map a path back to a position. */
export interface PositionedDocument {
  readonly fileName: string;
  readonly format: 'yaml' | 'json';
  readonly value: unknown;
  readonly yaml: Document;
  readonly lineCounter: LineCounter;
}

function positionAt(lineCounter: LineCounter, offset: number): { line: number; column: number } {
  const pos = lineCounter.linePos(offset);
  return { line: Math.max(1, pos.line), column: Math.max(1, pos.col) };
}

function issueAt(lineCounter: LineCounter, offset: number, message: string, path: ConfigPath = []): ConfigIssue {
  return { message, path, ...positionAt(lineCounter, offset) };
}

function looksLikeJson(text: string, fileName: string): boolean {
  if (/\.json$/i.test(fileName)) return true;
  if (/\.ya?ml$/i.test(fileName)) return false;
  return /^\s*[{[]/.test(text);
}

/** yaml's lexer emits these control tokens besides source text; they take no room in the source. */
const LEXER_CONTROL_TOKENS = new Set(['\u{FEFF}', '\x02', '\x18', '\x1f']);

/**
 * Refuses nesting that could exhaust the YAML parser before it runs: flow brackets deeper than the limit, found
 * with yaml's own lexer (linear, and it knows what is quoted), or a line whose indentation and compact `- `
 * markers imply the same depth.
 */
function findExcessiveNesting(text: string, lineCounter: LineCounter): ConfigIssue | undefined {
  const tooDeep = (offset: number): ConfigIssue =>
    issueAt(lineCounter, offset, `nesting deeper than ${MAX_CONFIG_DEPTH} levels`);
  const blockLimit = 4 * MAX_CONFIG_DEPTH;
  for (let start = 0; start < text.length; start = text.indexOf('\n', start) + 1 || text.length) {
    const prefix = /^[ \t-]*/.exec(text.slice(start, start + blockLimit + 1))?.[0] ?? '';
    if (prefix.length > blockLimit) return tooDeep(start);
  }
  // Fewer brackets than the limit cannot nest past it, which spares ordinary files the lexing pass.
  let brackets = 0;
  for (let i = 0; i < text.length && brackets <= MAX_CONFIG_DEPTH; i++)
    if (text[i] === '[' || text[i] === '{') brackets++;
  if (brackets <= MAX_CONFIG_DEPTH) return undefined;
  let depth = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      if (++depth > MAX_CONFIG_DEPTH) return tooDeep(offset);
    } else if (token === ']' || token === '}') {
      depth = Math.max(0, depth - 1);
    }
    if (!LEXER_CONTROL_TOKENS.has(token)) offset += token.length;
  }
  return undefined;
}

/**
 * Parses YAML or JSON text (JSON by extension, or by a leading `{` or `[` when the name says neither), keeping
 * positions. Throws ConfigError with a line and column for syntax errors, oversized or over-nested input, and
 * YAML alias bombs.
 */
export function parseDocument(source: string, fileName: string): PositionedDocument {
  // A byte-order mark is invisible in editors, so columns are counted without it.
  const text = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  const lineCounter = new LineCounter();
  // The line table is needed for pre-parse errors too; the YAML parser fills it again from scratch.
  const prescanCounter = new LineCounter();
  prescanCounter.addNewLine(0);
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) prescanCounter.addNewLine(i + 1);
  const fail = (issue: ConfigIssue): never => {
    throw new ConfigError(fileName, [issue]);
  };
  if (text.length > MAX_CONFIG_BYTES)
    fail(issueAt(prescanCounter, 0, `file is larger than ${MAX_CONFIG_BYTES / 1024} KiB; config files are small`));
  const format = looksLikeJson(text, fileName) ? 'json' : 'yaml';
  if (format === 'json') {
    const syntax = findJsonSyntaxError(text, MAX_CONFIG_DEPTH);
    if (syntax) fail(issueAt(prescanCounter, syntax.offset, `invalid JSON: ${syntax.message}`));
  } else {
    const nesting = findExcessiveNesting(text, prescanCounter);
    if (nesting) fail(nesting);
  }

  const yaml = parseYamlDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true });
  const syntaxError = yaml.errors[0];
  if (syntaxError) {
    const kind = format === 'json' ? 'JSON' : 'YAML';
    let message = syntaxError.message.split('\n')[0].replace(/ at line \d+, column \d+.*$/, '');
    // The key a duplicate is about is named: "nodes" twice, the second over a limit, is a key the user must find.
    if (syntaxError.code === 'DUPLICATE_KEY') {
      const key = /^\s*("(?:[^"\\]|\\.)*"|'[^']*'|[^:\s,}]+)/.exec(
        text.slice(syntaxError.pos[0], syntaxError.pos[0] + 200),
      );
      if (key) message = `the key ${key[1].slice(0, 100)} appears more than once in this mapping; keep one`;
    }
    fail(issueAt(lineCounter, syntaxError.pos[0], `invalid ${kind}: ${message}`));
  }
  let value: unknown;
  try {
    value = yaml.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // yaml throws a ReferenceError when aliases expand past maxAliasCount, and for aliases to unknown anchors.
    const reason = error instanceof Error ? error.message : String(error);
    const message = /alias count/i.test(reason)
      ? `too many YAML aliases (more than ${MAX_ALIAS_COUNT}); refusing to expand`
      : `invalid YAML: ${reason}`;
    fail(issueAt(lineCounter, 0, message));
  }
  const doc: PositionedDocument = { fileName, format, value, yaml, lineCounter };
  // Counts and sizes are held to the one table of limits here, where every config format passes, with positions.
  const overLimit = limitViolations(value);
  if (overLimit.length > 0)
    throw new ConfigError(
      fileName,
      overLimit.map((o) => issueAtPath(doc, o.path, o.message, { key: false })),
    );
  return doc;
}

/** The YAML node at `path`, or the deepest ancestor that exists; `pairKey` asks for the key of the last step. */
function nodeAt(doc: PositionedDocument, path: ConfigPath, pairKey: boolean): Node | undefined {
  let node: unknown = doc.yaml.contents;
  for (let i = 0; i < path.length; i++) {
    const step = path[i];
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => isPair(p) && (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(step),
      );
      if (!pair) return node;
      if (pairKey && i === path.length - 1 && pair.key && typeof pair.key === 'object') return pair.key as Node;
      node = pair.value ?? pair.key;
    } else if (isSeq(node) && typeof step === 'number' && node.items[step]) {
      node = node.items[step];
    } else {
      return node as Node | undefined;
    }
  }
  return node as Node | undefined;
}

/** The 1-based position of the value at `path` (or of its key, with `key: true`), or 1:1 when there is none. */
export function positionOf(
  doc: PositionedDocument,
  path: ConfigPath,
  options: { key?: boolean } = {},
): { line: number; column: number } {
  const node = nodeAt(doc, path, options.key ?? false);
  return positionAt(doc.lineCounter, node?.range?.[0] ?? 0);
}

/** Builds a ConfigIssue for `path`, for semantic checks made after schema validation. */
export function issueAtPath(
  doc: PositionedDocument,
  path: ConfigPath,
  message: string,
  options: { key?: boolean; suggestion?: string } = {},
): ConfigIssue {
  return { message, path, suggestion: options.suggestion, ...positionOf(doc, path, options) };
}

/** Made on the first validation: building it costs a CLI start tens of milliseconds that most commands never use. */
let ajv: Ajv | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

function pathFromPointer(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

export function formatPath(path: ConfigPath): string {
  return path.reduce<string>(
    (out, step) => (typeof step === 'number' ? `${out}[${step}]` : out ? `${out}.${step}` : step),
    '',
  );
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a mapping of keys',
  array: 'a list',
  null: 'null',
};

function shown(value: unknown): string {
  const text = typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** Turns one ajv error into a positioned issue whose message names the key and, where it can, a fix. */
function toIssue(doc: PositionedDocument, error: ErrorObject): ConfigIssue {
  const path = pathFromPointer(error.instancePath);
  const where = path.length > 0 ? `${formatPath(path)}: ` : '';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      const inside = path.length > 0 ? ` in ${formatPath(path)}` : '';
      return { ...issueAtPath(doc, path, `missing required key '${missing}'${inside}`), missingKey: missing };
    }
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const known = Object.keys((error.parentSchema?.properties as object | undefined) ?? {});
      const suggestion = closestMatch(key, known);
      const hint = suggestion
        ? ` (did you mean '${suggestion}'?)`
        : known.length > 0
          ? ` (expected one of: ${known.join(', ')})`
          : '';
      return issueAtPath(doc, [...path, key], `${where}unknown key '${key}'${hint}`, { key: true, suggestion });
    }
    case 'type': {
      const types = String(params.type)
        .split(',')
        .map((t) => TYPE_NAMES[t] ?? t);
      return issueAtPath(doc, path, `${where}must be ${types.join(' or ')} (got ${shown(error.data)})`);
    }
    case 'enum': {
      const allowed = ((params.allowedValues as unknown[]) ?? []).map(String);
      const suggestion = typeof error.data === 'string' ? closestMatch(error.data, allowed) : undefined;
      const hint = suggestion ? ` (did you mean '${suggestion}'?)` : '';
      return issueAtPath(doc, path, `${where}must be one of ${allowed.join(', ')}; got ${shown(error.data)}${hint}`, {
        suggestion,
      });
    }
    case 'exclusiveMinimum':
    case 'minimum':
    case 'maximum':
    case 'exclusiveMaximum': {
      const words = {
        exclusiveMinimum: 'greater than',
        minimum: 'at least',
        maximum: 'at most',
        exclusiveMaximum: 'less than',
      }[error.keyword];
      return issueAtPath(doc, path, `${where}must be ${words} ${String(params.limit)} (got ${shown(error.data)})`);
    }
    default:
      return issueAtPath(doc, path, `${where}${error.message ?? 'is invalid'}`);
  }
}

/**
 * Validates a parsed document against a JSON Schema (draft-07), returning every problem sorted by position. An
 * empty list means the document is valid. Messages name the key, e.g. "nodes: must be an integer (got 2.5)".
 */
export function validateAgainstSchema(doc: PositionedDocument, schema: object): ConfigIssue[] {
  let validate = compiled.get(schema);
  if (!validate) {
    ajv ??= new Ajv({ allErrors: true, verbose: true, strict: false });
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(doc.value)) return [];
  const seen = new Set<string>();
  const issues: ConfigIssue[] = [];
  for (const error of validate.errors ?? []) {
    // allErrors reports the branches of anyOf/oneOf separately; the summary line adds nothing a user can act on.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const issue = toIssue(doc, error);
    const key = `${issue.line}:${issue.column}:${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  // A misspelt key also shows up as a missing one; the did-you-mean message already explains both.
  const suggested = new Set(
    issues.filter((i) => i.suggestion !== undefined).map((i) => `${formatPath(i.path.slice(0, -1))}|${i.suggestion}`),
  );
  const explained = (issue: ConfigIssue): boolean =>
    issue.missingKey !== undefined && suggested.has(`${formatPath(issue.path)}|${issue.missingKey}`);
  return issues.filter((issue) => !explained(issue)).sort((a, b) => a.line - b.line || a.column - b.column);
}

/** Parses and validates in one step, returning the typed value or throwing a ConfigError with every issue. */
export function parseAndValidate<T>(
  text: string,
  fileName: string,
  schema: object,
): { value: T; doc: PositionedDocument } {
  const doc = parseDocument(text, fileName);
  const issues = validateAgainstSchema(doc, schema);
  if (issues.length > 0) throw new ConfigError(fileName, issues);
  return { value: doc.value as T, doc };
}
