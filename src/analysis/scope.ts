// The file model the rules share: functions (with parameters, defaults and their own statements), call sites of
// each function name, imports, attribute assignments (`self.world_size = ...`) and file-wide facts such as
// "a model is wrapped in DDP" or "the gloo backend is used".
import { child, childrenOf, named, unparen, visit, type PyNode } from './tree';
import type { Syntax } from './syntax';

export interface Param {
  readonly name: string;
  readonly node: PyNode;
  readonly index: number;
  readonly defaultValue?: PyNode;
}

export interface FunctionInfo {
  readonly name: string;
  /** The function_definition node, or the module for top-level code. */
  readonly node: PyNode;
  readonly params: Param[];
  readonly className?: string;
  readonly enclosing?: FunctionInfo;
  /** Every node that belongs to this function and not to a nested def or class, in source order. */
  readonly nodes: PyNode[];
  readonly calls: PyNode[];
  readonly assignments: PyNode[];
}

export interface CallSite {
  readonly call: PyNode;
  readonly caller: FunctionInfo;
}

export class FileModel {
  readonly functions: FunctionInfo[] = [];
  readonly byName = new Map<string, FunctionInfo[]>();
  /** Call sites keyed by the callee's last name (`reduce_gradients`, or `sync` for `self.sync(...)`). */
  readonly callSites = new Map<string, CallSite[]>();
  /** `alias -> module`: `dist -> torch.distributed`, `hvd -> horovod.torch`. */
  readonly imports = new Map<string, string>();
  /** `self.world_size`, `args.lr`, module globals: every value assigned to that text anywhere in the file. */
  readonly assignedValues = new Map<string, { value: PyNode; fn: FunctionInfo }[]>();
  readonly functionOf = new Map<PyNode, FunctionInfo>();
  /** Each class of the file (by name) and its bases as written. */
  private readonly classBases = new Map<string, string[]>();

  constructor(
    readonly module: PyNode,
    readonly syntax: Syntax,
  ) {
    this.collect(module, 'module', [], undefined, undefined);
    for (const fn of this.functions) {
      for (const call of fn.calls) {
        const name = syntax.calleeName(call);
        if (!name) continue;
        const list = this.callSites.get(name) ?? [];
        list.push({ call, caller: fn });
        this.callSites.set(name, list);
      }
      for (const a of fn.assignments) this.recordAssignment(a, fn);
    }
    // Imports anywhere (also inside functions, as scripts often do) define the aliases used below.
    visit(module, (n) => {
      if (n.type === 'import_statement' || n.type === 'import_from_statement') this.recordImport(n);
    });
  }

  private collect(
    node: PyNode,
    name: string,
    params: Param[],
    className: string | undefined,
    enclosing: FunctionInfo | undefined,
  ): void {
    const fn: FunctionInfo = { name, node, params, className, enclosing, nodes: [], calls: [], assignments: [] };
    this.functions.push(fn);
    if (name !== 'module') {
      const list = this.byName.get(name) ?? [];
      list.push(fn);
      this.byName.set(name, list);
    }
    const body = node.type === 'module' ? node : child(node, 'body');
    if (!body) return;
    visit(body, (n) => {
      if (n.type === 'function_definition') {
        const nameNode = child(n, 'name');
        this.collect(n, nameNode ? this.syntax.text(nameNode) : '<anonymous>', this.paramsOf(n), className, fn);
        return false;
      }
      if (n.type === 'class_definition') {
        const nameNode = child(n, 'name');
        const cls = nameNode ? this.syntax.text(nameNode) : undefined;
        if (cls) this.classBases.set(cls, this.basesOf(n));
        const classBody = child(n, 'body');
        for (const stmt of classBody ? named(classBody) : []) {
          const def = stmt.type === 'decorated_definition' ? child(stmt, 'definition') : stmt;
          if (def?.type === 'function_definition') {
            const defName = child(def, 'name');
            this.collect(def, defName ? this.syntax.text(defName) : '<anonymous>', this.paramsOf(def), cls, fn);
          } else {
            fn.nodes.push(stmt);
          }
        }
        return false;
      }
      fn.nodes.push(n);
      this.functionOf.set(n, fn);
      if (n.type === 'call') fn.calls.push(n);
      else if (n.type === 'assignment' || n.type === 'augmented_assignment') fn.assignments.push(n);
      return true;
    });
  }

  /** The bases of a class as written (`nn.Module`, `Base`); `object` is left out. */
  private basesOf(cls: PyNode): string[] {
    const list = child(cls, 'superclasses');
    return (list ? named(list) : [])
      .filter((b) => b.type === 'identifier' || b.type === 'attribute')
      .map((b) => this.syntax.text(b).replace(/\s+/g, ''))
      .filter((b) => b !== 'object');
  }

  /** The bases of a class of this file as written (`DataLoader`, `nn.Module`); undefined for a class not defined here. */
  classBasesOf(cls: string): readonly string[] | undefined {
    return this.classBases.get(cls);
  }

  /** The file's classes above `cls`; undefined when a base is not a class of this file (its ancestry is unknown). */
  private ancestorsOf(cls: string, seen = new Set<string>()): Set<string> | undefined {
    const bases = this.classBases.get(cls);
    if (!bases || seen.has(cls)) return undefined;
    seen.add(cls);
    const out = new Set<string>();
    for (const b of bases) {
      const up = this.ancestorsOf(b, seen);
      if (!up) return undefined;
      out.add(b);
      for (const a of up) out.add(a);
    }
    return out;
  }

  /**
   * The values assigned to `self.x` that the object a method of `fn`'s class sees: the assignments in methods of
   * a class of this file that is neither an ancestor nor a descendant of it are another object's attribute (a
   * buffer and the buckets it builds both keep `self.data_parallel_group`). Other texts keep every value.
   */
  valuesSeenBy(text: string, fn: FunctionInfo): { value: PyNode; fn: FunctionInfo }[] {
    const values = this.assignedValues.get(text) ?? [];
    const own = fn.className;
    if (!own || !text.startsWith('self.')) return values;
    const ownUp = this.ancestorsOf(own);
    if (!ownUp) return values;
    return values.filter((v) => {
      const other = v.fn.className;
      if (!other || other === own || ownUp.has(other)) return true;
      const otherUp = this.ancestorsOf(other);
      return !otherUp || otherUp.has(own);
    });
  }

  private paramsOf(def: PyNode): Param[] {
    const list = child(def, 'parameters');
    const out: Param[] = [];
    for (const p of list ? named(list) : []) {
      let nameNode: PyNode | undefined;
      let defaultValue: PyNode | undefined;
      if (p.type === 'identifier') nameNode = p;
      else if (p.type === 'default_parameter' || p.type === 'typed_default_parameter') {
        nameNode = child(p, 'name');
        defaultValue = child(p, 'value');
      } else if (p.type === 'typed_parameter') nameNode = named(p).find((c) => c.type === 'identifier');
      if (!nameNode) continue;
      out.push({ name: this.syntax.text(nameNode), node: p, index: out.length, defaultValue });
    }
    return out;
  }

  private recordAssignment(a: PyNode, fn: FunctionInfo): void {
    if (a.type !== 'assignment') return;
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (!left || !right) return;
    const lhs = unparen(left);
    if (lhs.type === 'identifier' || lhs.type === 'attribute') {
      const key = this.syntax.text(lhs).replace(/\s+/g, '');
      const list = this.assignedValues.get(key) ?? [];
      list.push({ value: right, fn });
      this.assignedValues.set(key, list);
    }
  }

  private recordImport(n: PyNode): void {
    if (n.type === 'import_statement') {
      for (const item of named(n)) {
        if (item.type === 'aliased_import') {
          const module = child(item, 'name');
          const alias = child(item, 'alias');
          if (module && alias) this.imports.set(this.syntax.text(alias), this.syntax.text(module));
        } else if (item.type === 'dotted_name') {
          const module = this.syntax.text(item);
          this.imports.set(module, module);
        }
      }
      return;
    }
    const moduleNode = child(n, 'module_name');
    const module = moduleNode ? this.syntax.text(moduleNode) : '';
    for (const item of childrenOf(n, 'name')) {
      if (item.type === 'aliased_import') {
        const name = child(item, 'name');
        const alias = child(item, 'alias');
        if (name && alias) this.imports.set(this.syntax.text(alias), `${module}.${this.syntax.text(name)}`);
      } else {
        const name = this.syntax.text(item);
        this.imports.set(name, `${module}.${name}`);
      }
    }
  }

  /** The module an alias stands for, following `import torch.distributed as dist` etc. */
  moduleOf(alias: string): string | undefined {
    return this.imports.get(alias);
  }

  /** The text to call torch.distributed functions with in this file (`dist`, `torch.distributed`), if imported. */
  torchDistAlias(): string | undefined {
    for (const [alias, module] of this.imports) {
      if (module === 'torch.distributed' || module === 'deepspeed.comm') return alias;
    }
    if (this.imports.has('torch')) return 'torch.distributed';
    return undefined;
  }

  aliasFor(modulePattern: RegExp): string | undefined {
    for (const [alias, module] of this.imports) if (modulePattern.test(module)) return alias;
    return undefined;
  }

  /** The function whose own statements contain this node. */
  enclosingFunction(node: PyNode): FunctionInfo | undefined {
    for (let n: PyNode | null = node; n; n = n.parent) {
      const fn = this.functionOf.get(n);
      if (fn) return fn;
    }
    return undefined;
  }

  /** Functions a call may invoke: `f(...)`, `self.f(...)`, and `obj.f(...)` where `obj = SomeClass(...)` here. */
  resolveCall(call: PyNode): FunctionInfo | undefined {
    return this.resolveCallWithInstance(call)?.fn;
  }

  /** As resolveCall, with the constructor call of the object a method is called on, when the file shows it. */
  resolveCallWithInstance(call: PyNode): { fn: FunctionInfo; constructorCall?: PyNode } | undefined {
    const fnNode = child(call, 'function');
    if (!fnNode) return undefined;
    const name = this.syntax.calleeName(call);
    const candidates = this.byName.get(name);
    if (!candidates) return undefined;
    if (fnNode.type !== 'attribute')
      return candidates.length === 1 && !candidates[0].className
        ? { fn: candidates[0] }
        : candidates.length === 1
          ? { fn: candidates[0] }
          : undefined;
    const obj = child(fnNode, 'object');
    const objText = obj ? this.syntax.text(obj).replace(/\s+/g, '') : '';
    if (objText === 'self' || objText === 'cls') {
      const own = this.classOf(call);
      const method =
        candidates.find((c) => c.className === own) ?? (candidates.length === 1 ? candidates[0] : undefined);
      return method ? { fn: method } : undefined;
    }
    for (const { value } of this.assignedValues.get(objText) ?? []) {
      const ctor = unparen(value);
      if (ctor.type !== 'call') continue;
      const cls = this.syntax.calleeName(ctor);
      const method = candidates.find((c) => c.className === cls);
      if (method) return { fn: method, constructorCall: ctor };
    }
    return undefined;
  }

  /** The class whose method contains the node. */
  classOf(node: PyNode): string | undefined {
    return this.enclosingFunction(node)?.className;
  }

  /** `__init__` of a class defined in this file. */
  initOf(className: string): FunctionInfo | undefined {
    return this.byName.get('__init__')?.find((f) => f.className === className);
  }

  /** Calls that construct a class defined in this file: `MpiAdam(...)`. */
  constructorCalls(className: string): CallSite[] {
    if (!this.initOf(className)) return [];
    return (this.callSites.get(className) ?? []).filter(
      (s) => child(s.call, 'function')?.type === 'identifier' || this.syntax.calleeName(s.call) === className,
    );
  }

  /** Parameters as seen by a caller: `self` is skipped for methods called through `self.`. */
  callableParams(fn: FunctionInfo): Param[] {
    if (fn.className && fn.params[0] && (fn.params[0].name === 'self' || fn.params[0].name === 'cls'))
      return fn.params.slice(1);
    return fn.params;
  }
}
