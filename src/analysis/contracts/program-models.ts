// The program's files as file models, parsed on demand and cached by text, and the names they use resolved across
// the imports: a top-level function or a class defined in the file or imported (through a few re-exports, as a
// package's `__init__.py` does), and a method found along a class's workspace bases. The cross-file token trace
// (splat-count.ts) reads its helpers, loss classes and their methods through this.
import type { Parser } from 'web-tree-sitter';
import { FileModel, type FunctionInfo } from '../scope';
import { Syntax } from '../syntax';
import { parseModule } from '../parse';
import { child, type PyNode } from '../tree';

const PARSE_BUDGET_MS = 2_000;
/** How many re-exports (`from .loss import SFTLoss` in a package's `__init__.py`) a name is followed through. */
const MAX_REEXPORTS = 3;
/** The base classes followed up from a class when a method is looked up. */
const MAX_BASES = 6;

/** A function of the program: the file it is in and its model there. */
export interface ProgramFunction {
  readonly path: string;
  readonly model: FileModel;
  readonly fn: FunctionInfo;
}

export interface ProgramClass {
  readonly path: string;
  readonly model: FileModel;
  readonly name: string;
}

export class ProgramModels {
  private readonly texts = new Map<string, string>();
  private readonly models = new Map<string, { text: string; model: FileModel | null }>();

  constructor(
    private readonly parser: Parser,
    private readonly resolveModule: (from: string, module: string) => string | undefined,
  ) {}

  setFile(path: string, text: string): void {
    this.texts.set(path, text);
  }

  removeFile(path: string): void {
    this.texts.delete(path);
    this.models.delete(path);
  }

  text(path: string): string | undefined {
    return this.texts.get(path);
  }

  paths(): IterableIterator<string> {
    return this.texts.keys();
  }

  modelOf(path: string): FileModel | undefined {
    const text = this.texts.get(path);
    if (text === undefined) return undefined;
    const cached = this.models.get(path);
    if (cached?.text === text) return cached.model ?? undefined;
    let model: FileModel | null;
    try {
      const parsed = parseModule(this.parser, text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
      model = 'module' in parsed ? new FileModel(parsed.module, new Syntax(parsed.source)) : null;
    } catch {
      model = null;
    }
    this.models.set(path, { text, model });
    return model ?? undefined;
  }

  /** The top-level function `name` denotes in `path`: defined there once, or imported. */
  functionNamed(path: string, name: string, depth = 0): ProgramFunction | undefined {
    const model = this.modelOf(path);
    if (!model || depth > MAX_REEXPORTS) return undefined;
    const defined = (model.byName.get(name) ?? []).filter((f) => !f.className && f.enclosing?.node.type === 'module');
    if (defined.length > 1) return undefined;
    if (defined.length === 1) return { path, model, fn: defined[0] };
    const target = this.imported(path, model, name);
    return target && this.functionNamed(target.path, target.name, depth + 1);
  }

  /** The class `name` denotes in `path`: defined there, or imported. */
  classNamed(path: string, name: string, depth = 0): ProgramClass | undefined {
    const model = this.modelOf(path);
    if (!model || depth > MAX_REEXPORTS) return undefined;
    if (model.classBasesOf(name) !== undefined) return { path, model, name };
    const target = this.imported(path, model, name);
    return target && this.classNamed(target.path, target.name, depth + 1);
  }

  /** The method `name` of a class, its own or the first base's that defines it (single workspace bases only). */
  method(cls: ProgramClass, name: string): ProgramFunction | undefined {
    let current: ProgramClass | undefined = cls;
    for (let i = 0; current && i < MAX_BASES; i++) {
      const own = (current.model.byName.get(name) ?? []).filter((f) => f.className === current!.name);
      if (own.length === 1) return { path: current.path, model: current.model, fn: own[0] };
      if (own.length > 1) return undefined;
      const bases: ProgramClass[] = (current.model.classBasesOf(current.name) ?? [])
        .map((b) => this.classNamed(current!.path, b.split('.').pop() ?? b))
        .filter((b): b is ProgramClass => b !== undefined);
      if (bases.length > 1) return undefined;
      current = bases[0];
    }
    return undefined;
  }

  /**
   * The calls that build class `cls` anywhere in the program (`Trainer(...)`, by a name that resolves to it), each
   * with the function it is made in. Only files whose text names the class are parsed.
   */
  constructionSites(cls: ProgramClass): { readonly at: ProgramFunction; readonly call: PyNode }[] {
    const out: { at: ProgramFunction; call: PyNode }[] = [];
    for (const [path, text] of this.texts) {
      if (!text.includes(`${cls.name}(`)) continue;
      const model = this.modelOf(path);
      for (const site of model?.callSites.get(cls.name) ?? []) {
        const callee = child(site.call, 'function');
        if (!model || callee?.type !== 'identifier') continue;
        const target = this.classNamed(path, cls.name);
        if (target?.path === cls.path && target.name === cls.name)
          out.push({ at: { path, model, fn: site.caller }, call: site.call });
      }
    }
    return out;
  }

  /** `from pkg.mod import name` (or `as` alias): the file of `pkg.mod` and the name there. */
  private imported(path: string, model: FileModel, name: string): { path: string; name: string } | undefined {
    const dotted = model.moduleOf(name);
    const cut = dotted?.lastIndexOf('.') ?? -1;
    if (!dotted || cut <= 0) return undefined;
    const file = this.resolveModule(path, dotted.slice(0, cut));
    return file && file !== path ? { path: file, name: dotted.slice(cut + 1) } : undefined;
  }
}
