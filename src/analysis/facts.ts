// Builds "facts": one reduction seen from the function that calls it, through the chain of helpers. A helper
// such as `average_gradients(model, op='sum')` is instantiated at each of its call sites, so its parameters
// (the operation, the divisor, flags in `if` conditions) take the values that call site gives them.
import type { PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Binding, Env } from './sizes';
import type { Reduction } from './reductions';
import { type FunctionFlow } from './flow';
import { nestedCallContexts } from './call-contexts';

export interface Frame {
  readonly fn: FunctionInfo;
  readonly flow: FunctionFlow;
  /** The alias key of the reduced tensor in this function, when it can be followed here. */
  readonly key?: string;
  readonly env: Env;
  /** The call in the next (outer) frame that invoked this function. */
  readonly callSite?: PyNode;
}

export interface Fact {
  readonly reduction: Reduction;
  /** frames[0] holds the reduction; each next frame is a caller of the previous one. */
  readonly frames: Frame[];
}

interface PathStep {
  readonly fn: FunctionInfo;
  readonly callSite?: PyNode;
  readonly constructorCall?: PyNode;
  /** The environment the constructor call runs in: one call of the nested helper that holds it, when it is in one. */
  readonly constructorEnv?: Env;
}

const MAX_DEPTH = 4;
const MAX_PATHS = 16;

export class FactBuilder {
  private readonly flows = new Map<FunctionInfo, FunctionFlow>();
  private readonly computing = new Set<FunctionInfo>();

  constructor(
    private readonly model: FileModel,
    private readonly makeFlow: (
      fn: FunctionInfo,
      helperReturnArg: (call: PyNode) => PyNode | undefined,
    ) => FunctionFlow,
  ) {}

  flowOf(fn: FunctionInfo): FunctionFlow {
    let flow = this.flows.get(fn);
    if (!flow) {
      this.computing.add(fn);
      flow = this.makeFlow(fn, (call) => this.helperReturnArg(call));
      this.computing.delete(fn);
      this.flows.set(fn, flow);
    }
    return flow;
  }

  /** For `y = helper(x)` where helper returns (a view of) its parameter: the argument it returns. */
  private helperReturnArg(call: PyNode): PyNode | undefined {
    const fn = this.model.resolveCall(call);
    if (!fn || this.computing.has(fn)) return undefined;
    const flow = this.flowOf(fn);
    const params = this.model.callableParams(fn);
    const args = this.model.syntax.args(call);
    for (const p of params) {
      if (!flow.returnKeys.includes(flow.find(p.name))) continue;
      const offset = fn.params.length - params.length;
      return args.keywords.get(p.name)?.value ?? args.positional[p.index - offset];
    }
    return undefined;
  }

  bind(fn: FunctionInfo, call: PyNode | undefined, callerEnv: Env | undefined): Map<string, Binding> {
    const bindings = new Map<string, Binding>();
    const params = call ? this.model.callableParams(fn) : fn.params;
    const args = call ? this.model.syntax.args(call) : undefined;
    const defaultsEnv: Env = { fn: fn.enclosing ?? this.model.functions[0] };
    params.forEach((p, i) => {
      const given = args?.keywords.get(p.name)?.value ?? args?.positional[i];
      if (given && callerEnv)
        bindings.set(p.name, { node: given, env: callerEnv, callSite: call, isDefault: false, param: p.name });
      else if (p.defaultValue)
        bindings.set(p.name, {
          node: p.defaultValue,
          env: defaultsEnv,
          callSite: call,
          isDefault: true,
          param: p.name,
        });
    });
    return bindings;
  }

  /**
   * Every chain of callers above the function holding the reduction, up to a small depth. A method reached
   * through an object (`self.adam.update(g)` with `self.adam = MpiAdam(...)`) carries that constructor call; a
   * method nobody calls is tried once per constructor call of its class in the file.
   */
  private paths(fn: FunctionInfo): PathStep[][] {
    const done: PathStep[][] = [];
    const grow = (path: PathStep[]): void => {
      if (done.length >= MAX_PATHS) return;
      const top = path[path.length - 1];
      const sites =
        path.length > MAX_DEPTH
          ? []
          : (this.model.callSites.get(top.fn.name) ?? []).filter(
              (s) => this.model.resolveCall(s.call) === top.fn && !path.some((p) => p.fn === s.caller),
            );
      if (sites.length === 0) {
        const ctors = top.fn.className && !top.constructorCall ? this.model.constructorCalls(top.fn.className) : [];
        if (ctors.length === 0) done.push(path);
        for (const ctor of ctors.slice(0, MAX_PATHS))
          for (const constructorEnv of this.constructorEnvs(ctor.call))
            done.push([...path.slice(0, -1), { ...top, constructorCall: ctor.call, constructorEnv }]);
        return;
      }
      for (const site of sites) {
        const copy = path.slice();
        const resolved = this.model.resolveCallWithInstance(site.call);
        copy[copy.length - 1] = {
          ...top,
          callSite: site.call,
          constructorCall: top.constructorCall ?? resolved?.constructorCall,
        };
        copy.push({ fn: site.caller });
        grow(copy);
      }
    };
    grow([{ fn }]);
    return done;
  }

  /**
   * The environments a constructor call runs in: one per call of the nested helper that holds it (call-contexts.ts),
   * each object built with that call's arguments, or the enclosing function's own.
   */
  private constructorEnvs(ctor: PyNode): (Env | undefined)[] {
    const caller = this.model.enclosingFunction(ctor);
    const contexts = caller ? nestedCallContexts(this.model, caller) : undefined;
    return contexts && contexts.length > 0 ? contexts.map((c) => c.env) : [undefined];
  }

  /** The `__init__` bindings of an object built by `ctor`, for the methods of its class. */
  private instanceBindings(
    className: string | undefined,
    ctor: PyNode | undefined,
    env: Env | undefined,
  ): Map<string, Binding> | undefined {
    if (!className || !ctor) return undefined;
    const init = this.model.initOf(className);
    const caller = this.model.enclosingFunction(ctor);
    if (!init || !caller) return undefined;
    return this.bind(init, ctor, env ?? { fn: caller });
  }

  facts(): Fact[] {
    const out: Fact[] = [];
    for (const fn of this.model.functions) {
      const flow = this.flowOf(fn);
      for (const reduction of flow.reductions) {
        for (const path of this.paths(fn)) out.push(this.instantiate(reduction, path));
      }
    }
    return out;
  }

  private instantiate(reduction: Reduction, path: PathStep[]): Fact {
    // Environments are built from the outermost caller inwards, so each binding can be resolved further out.
    const envs: Env[] = new Array(path.length);
    for (let i = path.length - 1; i >= 0; i--) {
      const outer = i + 1 < path.length ? envs[i + 1] : undefined;
      const sameClassOuter = outer && outer.fn.className === path[i].fn.className ? outer.instance : undefined;
      const instance =
        this.instanceBindings(path[i].fn.className, path[i].constructorCall, path[i].constructorEnv) ?? sameClassOuter;
      envs[i] = { fn: path[i].fn, bindings: this.bind(path[i].fn, path[i].callSite, outer), instance };
    }
    const frames: Frame[] = [];
    let key: string | undefined = this.reducedKey(reduction, this.flowOf(path[0].fn));
    for (let i = 0; i < path.length; i++) {
      const flow = this.flowOf(path[i].fn);
      frames.push({ fn: path[i].fn, flow, key, env: envs[i], callSite: path[i].callSite });
      const call = path[i].callSite;
      if (call && i + 1 < path.length)
        key = key === undefined ? undefined : this.translate(key, path[i].fn, flow, call, this.flowOf(path[i + 1].fn));
    }
    return { reduction, frames };
  }

  /** The key of what a reduction sums: for a helper of another file that sums `model.parameters()`, their `.grad`. */
  private reducedKey(r: Reduction, flow: FunctionFlow): string | undefined {
    if (r.via?.shape !== 'parameters') return flow.keyOf(r.output ?? r.tensor);
    const params = flow.find(`#${this.model.syntax.text(r.tensor).replace(/\s+/g, '')}.parameters()`);
    return flow.find(`${params}.grad`);
  }

  /** The key of the same tensors in the caller: the argument given for the parameter they came from. */
  private translate(
    key: string,
    fn: FunctionInfo,
    flow: FunctionFlow,
    call: PyNode,
    outer: FunctionFlow,
  ): string | undefined {
    const s = this.model.syntax;
    const isGrad = key.endsWith('.grad');
    const base = isGrad ? key.slice(0, -5) : key;
    const params = this.model.callableParams(fn);
    const offset = fn.params.length - params.length;
    const args = s.args(call);
    const argFor = (name: string) => {
      const p = params.find((x) => x.name === name);
      return p ? (args.keywords.get(p.name)?.value ?? args.positional[p.index - offset]) : undefined;
    };
    for (const member of flow.members(base)) {
      const m = /^#(\w+)\.parameters\(\)$/.exec(member);
      const param = params.find((p) => p.name === member)
        ? member
        : m && params.some((p) => p.name === m[1])
          ? m[1]
          : undefined;
      if (!param) continue;
      const arg = argFor(param);
      if (!arg) continue;
      const argKey = m ? outer.find(`#${s.text(arg).replace(/\s+/g, '')}.parameters()`) : outer.keyOf(arg);
      if (argKey === undefined) continue;
      return isGrad ? outer.find(`${argKey}.grad`) : argKey;
    }
    if (flow.returnKeys.includes(flow.find(key))) return outer.keyOf(call);
    // An attribute of the object (`self.layer.weight.grad`) is the same tensor in every method of its class and in
    // the functions nested in them.
    const attribute = flow.members(base).find((m) => m.startsWith('@self.'));
    if (attribute && /^self\./.test(s.calleeText(call)))
      return isGrad ? outer.find(`${outer.find(attribute)}.grad`) : outer.find(attribute);
    return undefined;
  }
}
