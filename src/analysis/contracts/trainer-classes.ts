// What one file says about its classes, for judging them against a library's contract: each class's bases as
// the file's imports name them, whether it overrides `compute_loss` and what that override does with the count of
// items the Trainer passes it, and whether it sets the attributes that choose the Trainer's scaling. Read from the
// syntax tree alone, so it is cached per file and combined across files by hf-trainer.ts.
import type { Parser } from 'web-tree-sitter';
import { parseModule } from '../parse';
import { child, childrenOf, named, visit, type PyNode, type Source } from '../tree';
import type { SourceRange } from '../types';
import { readWindowDivision, type WindowDivision } from './training-step';

export interface ComputeLossFacts {
  /** The `def compute_loss` name, for the related location. */
  readonly range: SourceRange;
  /** The signature takes `num_items_in_batch`, by name or through `**kwargs` (otherwise the call fails). */
  readonly acceptsCount: boolean;
  /** The body reads the count (or the `**kwargs` that carry it): it may normalise by it. */
  readonly readsCount: boolean;
  /** The body names `gradient_accumulation_steps`: it may divide by it itself. */
  readonly namesAccumulation: boolean;
}

export interface ClassFacts {
  readonly name: string;
  readonly range: SourceRange;
  /** Each base as a dotted name through the imports (`transformers.Trainer`), or the local name. */
  readonly bases: readonly string[];
  readonly computeLoss?: ComputeLossFacts;
  /** `model_accepts_loss_kwargs`, `compute_loss_func` or `training_step` appear in the class: it chooses the scaling. */
  readonly choosesScaling: boolean;
  /** The `super().__init__(…)` call of the class's own `__init__`, where the Trainer reads the model's signature. */
  readonly superInit?: SourceRange;
  /** Its own `training_step` divides the loss by the configured window size before backward (training-step.ts). */
  readonly windowDivision?: WindowDivision;
  /** The class names `current_gradient_accumulation_steps`, the size of the window being run. */
  readonly namesWindowSize: boolean;
  /** It defines `_inner_training_loop` or `get_batch_samples`, which decide how micro-batches form windows. */
  readonly formsWindows: boolean;
}

export interface FileClasses {
  readonly classes: readonly ClassFacts[];
  /** Local name → dotted module path of the thing imported (`Trainer` → `transformers.Trainer`). */
  readonly imports: ReadonlyMap<string, string>;
  /** The file assigns a Trainer's `_inner_training_loop`, `get_batch_samples` or `training_step` (a patch). */
  readonly patchesLoop: boolean;
  /** The file passes `compute_loss_func=` (to a Trainer's constructor, perhaps): that function computes the loss. */
  readonly passesLossFunc: boolean;
}

/** Files worth parsing: only a class that names a trainer, or a method that chooses the Trainer's scaling. */
export function mayDefineTrainer(text: string): boolean {
  return /\bclass\s+\w+\s*\([^)]*Trainer|compute_loss|model_accepts_loss_kwargs|\.(_inner_training_loop|get_batch_samples|training_step)\s*=[^=]/.test(
    text,
  );
}

const PARSE_BUDGET_MS = 5_000;

export function readClasses(parser: Parser, text: string): FileClasses | undefined {
  if (!mayDefineTrainer(text)) return undefined;
  const parsed = parseModule(parser, text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
  if (!('module' in parsed)) return undefined;
  const { module, source } = parsed;
  const imports = readImports(module, source);
  const classes: ClassFacts[] = [];
  visit(module, (n) => {
    if (n.type === 'class_definition') {
      const facts = readClass(n, source, imports);
      if (facts) classes.push(facts);
    }
    return n.type !== 'function_definition';
  });
  return {
    classes,
    imports,
    patchesLoop: /\.\s*(_inner_training_loop|get_batch_samples|training_step)\s*=[^=]/.test(text),
    passesLossFunc: /\bcompute_loss_func\s*=[^=]/.test(text),
  };
}

function readImports(module: PyNode, source: Source): Map<string, string> {
  const imports = new Map<string, string>();
  visit(module, (n) => {
    if (n.type === 'import_statement') {
      for (const item of named(n)) {
        if (item.type === 'aliased_import') {
          const name = child(item, 'name');
          const alias = child(item, 'alias');
          if (name && alias) imports.set(source.textOf(alias), source.textOf(name));
        } else if (item.type === 'dotted_name') {
          const first = source.textOf(item).split('.')[0];
          imports.set(first, first);
        }
      }
      return false;
    }
    if (n.type === 'import_from_statement') {
      const moduleNode = child(n, 'module_name');
      const from = moduleNode ? source.textOf(moduleNode).replace(/\s+/g, '') : '';
      for (const item of childrenOf(n, 'name')) {
        const name = item.type === 'aliased_import' ? child(item, 'name') : item;
        const alias = item.type === 'aliased_import' ? child(item, 'alias') : item;
        if (name && alias) imports.set(source.textOf(alias), `${from}.${source.textOf(name)}`);
      }
      return false;
    }
    return true;
  });
  return imports;
}

function readClass(node: PyNode, source: Source, imports: ReadonlyMap<string, string>): ClassFacts | undefined {
  const nameNode = child(node, 'name');
  const body = child(node, 'body');
  if (!nameNode || !body) return undefined;
  const bases: string[] = [];
  const superclasses = child(node, 'superclasses');
  for (const base of superclasses ? named(superclasses) : []) {
    if (base.type !== 'identifier' && base.type !== 'attribute') continue;
    const text = source.textOf(base).replace(/\s+/g, '');
    const [head, ...rest] = text.split('.');
    const imported = imports.get(head);
    bases.push(imported ? [imported, ...rest].join('.') : text);
  }
  let computeLoss: ComputeLossFacts | undefined;
  let superInit: SourceRange | undefined;
  let windowDivision: WindowDivision | undefined;
  let formsWindows = false;
  for (const statement of named(body)) {
    const fn = statement.type === 'decorated_definition' ? child(statement, 'definition') : statement;
    if (fn?.type !== 'function_definition') continue;
    const fnName = child(fn, 'name');
    const name = fnName ? source.textOf(fnName) : '';
    if (name === 'compute_loss' && fnName) computeLoss = readComputeLoss(fn, fnName, source);
    if (name === '__init__') superInit = superInitCall(fn, source);
    if (name === 'training_step') windowDivision = readWindowDivision(fn, source);
    if (name === '_inner_training_loop' || name === 'get_batch_samples') formsWindows = true;
  }
  return {
    name: source.textOf(nameNode),
    range: source.range(nameNode),
    bases,
    computeLoss,
    choosesScaling: choosesScaling(body, source),
    superInit,
    windowDivision,
    namesWindowSize: namesIdentifier(body, source, 'current_gradient_accumulation_steps'),
    formsWindows,
  };
}

/**
 * The name appears in the code of the class, as an identifier or as a whole string (`getattr(self, "name", …)`);
 * comments and prose that mention it do not count.
 */
function namesIdentifier(body: PyNode, source: Source, name: string): boolean {
  let found = false;
  visit(body, (n) => {
    if (n.type === 'identifier' && source.textOf(n) === name) found = true;
    if (n.type === 'string' && /^[rbuf]*("""|'''|"|')([\s\S]*)\1$/i.exec(source.textOf(n))?.[2] === name) found = true;
    return !found;
  });
  return found;
}

/**
 * The class names `model_accepts_loss_kwargs` or `compute_loss_func` in its code, or defines `training_step`: it
 * chooses the Trainer's scaling itself. Comments and strings (a docstring that mentions them) do not count.
 */
function choosesScaling(body: PyNode, source: Source): boolean {
  let found = false;
  visit(body, (n) => {
    if (found) return false;
    if (n.type === 'identifier' && /^(model_accepts_loss_kwargs|compute_loss_func)$/.test(source.textOf(n)))
      found = true;
    if (n.type === 'function_definition' && source.textOf(child(n, 'name') ?? n) === 'training_step') found = true;
    return !found;
  });
  return found;
}

function readComputeLoss(fn: PyNode, fnName: PyNode, source: Source): ComputeLossFacts {
  const params = child(fn, 'parameters');
  const body = child(fn, 'body');
  let countName: string | undefined;
  let kwargsName: string | undefined;
  for (const p of params ? named(params) : []) {
    if (p.type === 'dictionary_splat_pattern') {
      const id = named(p)[0];
      if (id) kwargsName = source.textOf(id);
      continue;
    }
    const id = p.type === 'identifier' ? p : (child(p, 'name') ?? named(p)[0]);
    if (id && source.textOf(id) === 'num_items_in_batch') countName = 'num_items_in_batch';
  }
  const bodyText = body ? source.textOf(body) : '';
  const reads = (name: string | undefined) => name !== undefined && new RegExp(`\\b${name}\\b`).test(bodyText);
  return {
    range: source.range(fnName),
    acceptsCount: countName !== undefined || kwargsName !== undefined,
    readsCount: reads(countName) || reads(kwargsName) || /num_items_in_batch/.test(bodyText),
    namesAccumulation: /gradient_accumulation_steps|accumulation/.test(bodyText),
  };
}

/** `super().__init__(…)` or `Base.__init__(self, …)` directly in the body of `__init__`. */
function superInitCall(fn: PyNode, source: Source): SourceRange | undefined {
  let found: SourceRange | undefined;
  const body = child(fn, 'body');
  if (!body) return undefined;
  visit(body, (n) => {
    if (found || n.type === 'function_definition' || n.type === 'class_definition') return false;
    if (n.type === 'call') {
      const callee = child(n, 'function');
      const text = callee ? source.textOf(callee).replace(/\s+/g, '') : '';
      if (/^super\([^)]*\)\.__init__$|^\w+(\.\w+)*\.__init__$/.test(text) && !text.startsWith('self.')) {
        found = source.range(callee!);
        return false;
      }
    }
    return true;
  });
  return found;
}
