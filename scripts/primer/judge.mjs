// Where a finding counts for a bug/fix pair (used by bugfix.mjs). A finding counts when it lies LINE_SLACK lines from
// a line the pair names, in the same function as that line, or, when the fix adds a member that the class holding
// that line did not have (a method or a class attribute, written at the class body's indentation), at the level of
// that class itself: its header or a statement of its body outside every method. Such a finding is about the
// class as a whole (a Trainer subclass that lacks the `compute_loss` the fix adds), which is what the fix changed; a
// finding inside another method of the class is about that method's code and does not count.

// The checker may report the reduction while the fix edited the division a few lines away, or the other way round.
export const LINE_SLACK = 5;

// The line ranges of the Python functions and classes in a source, found by indentation: a `def` or `class` runs
// until the next code line indented no deeper than it. Lines inside triple-quoted strings are skipped, because a
// docstring may be dedented. This is an approximation (a bracket continued at a shallower indent, other than a line
// that only closes it, would end a scope early), which is enough to tell whether a finding and a fixed line share a
// scope. Each range is `{kind: 'def' | 'class', start, end, indent, bodyIndent}`, lines 1-based; `bodyIndent` is the
// indentation of the first code line after the header, or null for a scope without one.
export function scopeRanges(source) {
  const ranges = [];
  const open = [];
  let lastCode = 0;
  let inString = null;
  const lines = source.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    const text = line.trim();
    const number = index + 1;
    if (inString) {
      if (text.split(inString).length % 2 === 0) inString = null;
      lastCode = number;
      continue;
    }
    if (!text || text.startsWith('#')) continue;
    const indent = line.length - line.trimStart().length;
    // A line that only closes a bracket (the `):` of a long signature, the `)` of a call) continues the statement
    // above it, so it ends no scope even at the header's own indentation.
    const closesBracket = /^[)\]}]/.test(text);
    while (!closesBracket && open.length && indent <= open[open.length - 1].indent) {
      const scope = open.pop();
      ranges.push({ ...scope, end: lastCode });
    }
    const top = open[open.length - 1];
    if (top && top.bodyIndent === null && indent > top.indent && !closesBracket) top.bodyIndent = indent;
    const kind = /^(async\s+)?def\s/.test(text) ? 'def' : /^class\s/.test(text) ? 'class' : null;
    if (kind) open.push({ kind, start: number, indent, bodyIndent: null });
    for (const quote of ['"""', "'''"]) {
      if (text.split(quote).length % 2 === 0) inString = quote;
    }
    lastCode = number;
  }
  while (open.length) ranges.push({ ...open.pop(), end: lastCode });
  return ranges;
}

/** The innermost scope of `kind` (or of any kind) whose lines hold `line`, or null. */
export function innermostScope(ranges, line, kind) {
  let best = null;
  for (const range of ranges) {
    if (kind && range.kind !== kind) continue;
    if (range.start <= line && line <= range.end && (!best || range.start > best.start)) best = range;
  }
  return best;
}

/**
 * The hunks of `git diff -U0` output: `{oldStart, oldCount, added: [text]}`, where an insertion (oldCount 0) goes
 * after line oldStart of the old file.
 */
export function parseHunks(diffText) {
  const hunks = [];
  let current = null;
  for (const line of diffText.split('\n')) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/.exec(line);
    if (header) {
      current = { oldStart: Number(header[1]), oldCount: header[2] === undefined ? 1 : Number(header[2]), added: [] };
      hunks.push(current);
    } else if (current && line.startsWith('+') && !line.startsWith('+++')) {
      current.added.push(line.slice(1));
    }
  }
  return hunks;
}

/** The name a class-body line defines: `def name(`, `async def name(`, `class Name`, `name = …` or `name: T = …`. */
function memberName(trimmed) {
  const match = /^(?:(?:async\s+)?def|class)\s+([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)/.exec(trimmed);
  return match ? match[1] || match[2] : null;
}

/** The names the class body of `cls` defines in `lines` (the buggy source), read at its body's indentation. */
function membersOf(cls, lines) {
  const names = new Set();
  for (let number = cls.start + 1; number <= cls.end; number++) {
    const text = lines[number - 1];
    if (text.length - text.trimStart().length !== cls.bodyIndent) continue;
    const name = memberName(text.trim());
    if (name) names.add(name);
  }
  return names;
}

/**
 * The class to which the fix adds a member around `bugLine`: the innermost class of the buggy source that holds the
 * line, when a hunk anchored inside that class adds, at the class body's indentation, a method or attribute whose
 * name the class did not define (what the class lacked). A fix that edits a method's signature or body, or that
 * changes a member that was already there, gives none: those are judged by the line and function rules. Null otherwise.
 */
export function classChangedAt(source, ranges, hunks, bugLine) {
  const cls = innermostScope(ranges, bugLine, 'class');
  if (!cls || cls.bodyIndent === null) return null;
  const lines = source.split('\n');
  const existing = membersOf(cls, lines);
  // An insertion after the class's last line, or after the blank lines that follow it, still extends its body when
  // its lines are indented as members.
  let last = cls.end;
  while (last < lines.length && !lines[last].trim()) last++;
  const addsMember = hunks.some((hunk) => {
    if (hunk.oldStart < cls.start || hunk.oldStart > last) return false;
    return hunk.added.some((text) => {
      if (text.length - text.trimStart().length !== cls.bodyIndent) return false;
      const name = memberName(text.trim());
      return name !== null && !existing.has(name);
    });
  });
  return addsMember ? cls : null;
}

/** Whether a finding at `line` counts for the pair's `bugLines` (see the head of this file). */
export function inRegion(line, bugLines, source, hunks = []) {
  const ranges = scopeRanges(source);
  return bugLines.some((bugLine) => {
    if (Math.abs(line - bugLine) <= LINE_SLACK) return true;
    const fn = innermostScope(ranges, bugLine, 'def');
    if (fn !== null && fn.start <= line && line <= fn.end) return true;
    const cls = classChangedAt(source, ranges, hunks, bugLine);
    return cls !== null && innermostScope(ranges, line) === cls;
  });
}
