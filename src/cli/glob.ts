// Glob patterns for `check --exclude`, read as ruff and flake8 read theirs: `*` and `?` stay inside one path
// segment, `**` crosses folders, `[abc]` is a character class. A pattern without a slash matches any segment
// of the path (a folder or the file's name); one with a slash matches the path from its start, or a folder
// above the file, so `build/**` and `build` both leave out everything under build/.

function escapeRegExp(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char;
}

/** The regular expression a glob stands for, anchored at both ends. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (char === '*' && glob[i + 1] === '*') {
      // `**/` matches zero or more folders; a trailing `**` matches everything below.
      const slash = glob[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) source += '\\[';
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        source += `[${body}]`;
        i = end;
      }
    } else source += escapeRegExp(char);
  }
  return new RegExp(`^${source}$`);
}

/** A test for paths (relative, `/`-separated) against a list of patterns. */
export function globMatcher(patterns: readonly string[]): (path: string) => boolean {
  const compiled = patterns.map((p) => {
    const trimmed = p.replace(/^\.\//, '').replace(/\/+$/, '');
    return { regex: globToRegExp(trimmed), anchored: trimmed.includes('/') };
  });
  return (path) => {
    const segments = path.split(/[\\/]/).filter((s) => s !== '' && s !== '.');
    return compiled.some(({ regex, anchored }) => {
      if (!anchored) return segments.some((s) => regex.test(s));
      // The path itself or any folder above it.
      for (let n = segments.length; n > 0; n--) if (regex.test(segments.slice(0, n).join('/'))) return true;
      return false;
    });
  };
}
