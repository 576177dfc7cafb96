// The files a micro-batch schedule's run can execute: the files of the schedule, of the helpers its count was read
// through, of the callers that hand the callback down and of the callback, and every module these import, followed
// to the end. A division by the count's setting in one of them may be the normalisation the schedule lacks (a loss
// helper the callback calls, a gradient scaling after the step's sync), so it keeps the callback contract's CP008
// silent; a division in a file none of them imports (another script, a tool) says nothing about this run.
//
// The imports are read from the text and over-approximated so that no file the run may execute is left out: an
// absolute import reaches every file whose path ends in the module's parts (not only the one the program's resolver
// would choose), `from m import x` also reaches the module `m.x`, and importing `a.b.c` runs the `__init__.py` of
// `a` and `a.b`. A relative import is resolved from the importing file's folder.

/** The modules a file's text imports, as written: `a.b`, `.c`, `..d.e`, with `from m import x` giving `m` and `m.x`. */
export function importedModules(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]+\(?([^#\n)]*)/gm)) {
    const module = m[1];
    out.push(module);
    for (const part of m[2].split(',')) {
      const name = /^\s*(\w+)/.exec(part)?.[1];
      if (name && name !== 'import') out.push(module.endsWith('.') ? `${module}${name}` : `${module}.${name}`);
    }
  }
  for (const m of text.matchAll(/^[ \t]*import[ \t]+([^#\n]+)/gm)) {
    for (const part of m[1].split(',')) {
      const name = /^\s*([\w.]+)/.exec(part)?.[1];
      if (name) out.push(name);
    }
  }
  return out;
}

/** The workspace's Python files by module name (the file's name, or its folder's for `__init__.py`). */
export function filesByModuleName(paths: Iterable<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const path of paths) {
    if (!path.endsWith('.py')) continue;
    const parts = path.split('/');
    const file = parts[parts.length - 1];
    const name = file === '__init__.py' ? (parts[parts.length - 2] ?? '') : file.slice(0, -3);
    out.set(name, [...(out.get(name) ?? []), path]);
  }
  return out;
}

/** Every file that importing `module` from `from` may run (the module's file and its packages' `__init__.py`). */
function filesOf(module: string, from: string, byName: ReadonlyMap<string, readonly string[]>): string[] {
  let parts: string[];
  let exactDir: string[] | undefined;
  if (module.startsWith('.')) {
    const dots = /^\.+/.exec(module)![0].length;
    const dir = from.split('/').slice(0, -1);
    exactDir = dir.slice(0, Math.max(0, dir.length - (dots - 1)));
    parts = module
      .slice(dots)
      .split('.')
      .filter((p) => p !== '');
  } else parts = module.split('.');
  const out: string[] = [];
  // `from . import x` also runs the package of the importing file.
  if (exactDir && parts.length === 0) {
    const init = [...exactDir, '__init__.py'].join('/');
    if ((byName.get(exactDir[exactDir.length - 1] ?? '') ?? []).includes(init)) out.push(init);
  }
  // `a`, `a.b`, `a.b.c`: each prefix is a package (or the module) that the import runs.
  for (let n = 1; n <= parts.length; n++) {
    const prefix = parts.slice(0, n);
    for (const path of byName.get(prefix[prefix.length - 1]) ?? []) {
      const withoutFile = path.endsWith('/__init__.py') ? path.slice(0, -'/__init__.py'.length) : path.slice(0, -3);
      const wanted = exactDir ? [...exactDir, ...prefix].join('/') : prefix.join('/');
      if (exactDir ? withoutFile === wanted : withoutFile === wanted || withoutFile.endsWith(`/${wanted}`))
        out.push(path);
    }
  }
  return out;
}

/** The files reachable from `start` through imports (`start` included). */
export function importClosure(
  start: Iterable<string>,
  importsOf: (path: string) => readonly string[] | undefined,
  byName: ReadonlyMap<string, readonly string[]>,
): Set<string> {
  const reached = new Set<string>();
  const stack = [...start];
  while (stack.length > 0) {
    const path = stack.pop()!;
    if (reached.has(path)) continue;
    reached.add(path);
    for (const module of importsOf(path) ?? []) {
      for (const file of filesOf(module, path, byName)) if (!reached.has(file)) stack.push(file);
    }
  }
  return reached;
}
