// A strict JSON syntax check that reports the offset of the first error. JSON.parse in Node 20 does not always
// say where it failed, and the YAML parser accepts things JSON does not (comments, trailing commas, bare words),
// so JSON files are checked here first and only then parsed for positions.

export interface JsonSyntaxError {
  readonly offset: number;
  readonly message: string;
}

/** Returns the first syntax error in `text`, or undefined when it is valid JSON nested at most `maxDepth` deep. */
export function findJsonSyntaxError(text: string, maxDepth: number): JsonSyntaxError | undefined {
  let i = 0;
  const fail = (message: string, at = i): JsonSyntaxError => ({ offset: Math.min(at, text.length), message });
  const skipSpace = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const describe = (): string => (i >= text.length ? 'end of file' : `'${text[i]}'`);

  const parseString = (): JsonSyntaxError | undefined => {
    const start = i++;
    while (i < text.length) {
      const ch = text[i];
      if (ch === '"') {
        i++;
        return undefined;
      }
      if (ch === '\\') {
        const next = text[i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail('invalid \\u escape in string');
          i += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) {
          i += 2;
        } else {
          return fail(`invalid escape '\\${next ?? ''}' in string`);
        }
      } else if (ch < ' ') {
        return fail(ch === '\n' ? 'unterminated string (strings cannot span lines)' : 'control character in string');
      } else {
        i++;
      }
    }
    return fail('unterminated string', start);
  };

  const parseNumber = (): JsonSyntaxError | undefined => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match) return fail(`invalid number`);
    i += match[0].length;
    return undefined;
  };

  // Containers are tracked on an explicit stack so hostile nesting cannot overflow the call stack.
  const stack: ('{' | '[')[] = [];
  /** Reads a scalar, or stops at an opening bracket and returns it; containers are handled by the loop below. */
  const parseValue = (): JsonSyntaxError | '{' | '[' | undefined => {
    skipSpace();
    const ch = text[i];
    if (ch === '{' || ch === '[') return ch;
    if (ch === '"') return parseString();
    if (ch === '-' || (ch >= '0' && ch <= '9')) return parseNumber();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return undefined;
      }
    }
    if (ch === "'") return fail('strings must use double quotes in JSON');
    return fail(`expected a value but found ${describe()}`);
  };

  // Each loop iteration reads one value, then the separator or closer that follows it.
  skipSpace();
  if (i >= text.length) return fail('the file is empty');
  for (;;) {
    const read = parseValue();
    if (typeof read === 'object') return read;
    if (read !== undefined) {
      const opened = read;
      stack.push(opened);
      if (stack.length > maxDepth) return fail(`nesting deeper than ${maxDepth} levels`);
      i++;
      skipSpace();
      const closer = opened === '{' ? '}' : ']';
      if (text[i] === closer) {
        stack.pop();
        i++;
      } else {
        if (opened === '{') {
          const keyError = parseKey();
          if (keyError) return keyError;
        }
        continue;
      }
    }
    // After a complete value: a comma continues the container, a closer ends it.
    for (;;) {
      skipSpace();
      const top = stack[stack.length - 1];
      if (top === undefined) {
        return i < text.length ? fail(`unexpected ${describe()} after the end of the document`) : undefined;
      }
      const closer = top === '{' ? '}' : ']';
      if (text[i] === ',') {
        const comma = i++;
        skipSpace();
        if (text[i] === closer) return fail(`trailing comma before '${closer}'`, comma);
        if (top === '{') {
          const keyError = parseKey();
          if (keyError) return keyError;
        }
        break;
      }
      if (text[i] === closer) {
        stack.pop();
        i++;
        continue;
      }
      return fail(`expected ',' or '${closer}' but found ${describe()}`);
    }
  }

  function parseKey(): JsonSyntaxError | undefined {
    skipSpace();
    if (text[i] !== '"') return fail(`expected a double-quoted key but found ${describe()}`);
    const error = parseString();
    if (error) return error;
    skipSpace();
    if (text[i] !== ':') return fail(`expected ':' after the key but found ${describe()}`);
    i++;
    return undefined;
  }
}
