// A loop's batch field padded by a collate function that another file hands to the loader: the loop iterates an
// object's loader (`for ids, masks in self.train_dataloader`) that its class's `__init__` stores from a parameter,
// every construction of the class in the program passes a loader that a helper builds (`strategy.setup_dataloader(
// dataset, ..., dataset.collate_fn)` returning `StatefulDataLoader(..., collate_fn=collate_fn)`), and the collate
// function it is given pads that field's per-sample-length masks with zeros (collate-masks.ts's paddedField). The
// batch's token count then changes with the samples' lengths. Each construction site must prove it; a site, helper
// or collate function not followed proves nothing.
import { child, named, unparen } from '../tree';
import { batchLoop, paddedField } from '../collate-masks';
import { boundArgument, lastAssigned, ownInit, resolved, type Frame, type Value } from './bound-values';
import type { ProgramClass, ProgramFunction, ProgramModels } from './program-models';

/** A loader construction: torch's `DataLoader` and the subclasses named after it (`StatefulDataLoader`). */
const LOADER = /DataLoader$/;
/** The loader helpers and construction sites followed before giving up. */
const MAX_DEPTH = 6;

/** How calls are entered and objects' classes found (splat-token-count.ts, which owns this reader). */
export interface CallEntry {
  enter(call: Value): Frame | undefined;
  constructed(value: Value): { cls: ProgramClass; ctor: Value } | undefined;
}

export class LoaderFields {
  constructor(
    private readonly models: ProgramModels,
    private readonly tokens: CallEntry,
  ) {}

  /** `name`, read at `before` in the frame, is a field of a loop's batch that a collate function pads (see above). */
  padded(frame: Frame, name: string, before: number): boolean {
    const found = batchLoop(frame.at.model, frame.at.fn, name, before);
    return !!found && this.loaderPads({ node: found.loader, frame }, found.index, 0);
  }

  /** Every loader the value can be (through constructor parameters) pads field `index` in its collate function. */
  private loaderPads(value: Value, index: number, depth: number): boolean {
    if (depth > MAX_DEPTH) return false;
    const sites = constructorArguments(this.models, value);
    if (sites) return sites.length > 0 && sites.every((v) => this.loaderPads(v, index, depth + 1));
    const r = resolved(value);
    const n = r && unparen(r.node);
    if (!r || !n || n.type !== 'call') return false;
    const s = r.frame.at.model.syntax;
    if (LOADER.test(s.calleeName(n))) {
      const collate = s.args(n).keywords.get('collate_fn')?.value;
      const fn = collate && this.functionOf({ node: collate, frame: r.frame });
      return !!fn && paddedField(fn.model, fn.fn, index) !== undefined;
    }
    const helper = this.tokens.enter({ node: n, frame: r.frame });
    const ret = helper && helperReturn(helper);
    return !!ret && this.loaderPads(ret, index, depth + 1);
  }

  /** The function a collate value names: a top-level function, or a method of the object it is read from. */
  private functionOf(value: Value): ProgramFunction | undefined {
    const r = resolved(value);
    const n = r && unparen(r.node);
    if (!r || !n) return undefined;
    const s = r.frame.at.model.syntax;
    if (n.type === 'identifier') return this.models.functionNamed(r.frame.at.path, s.text(n));
    const obj = n.type === 'attribute' ? child(n, 'object') : undefined;
    const attr = n.type === 'attribute' ? child(n, 'attribute') : undefined;
    const object = obj && resolved({ node: obj, frame: r.frame });
    const made = object && this.tokens.constructed(object);
    return made && attr ? this.models.method(made.cls, s.text(attr)) : undefined;
  }
}

/**
 * `self.attr` stored by `__init__` from its parameter, read in a frame entered through no call: the argument each
 * construction of the class in the program passes for it, read where the construction is made (the construction
 * itself where it passes none). Undefined where the value is not such an attribute.
 */
export function constructorArguments(models: ProgramModels, value: Value): Value[] | undefined {
  const { frame } = value;
  const s = frame.at.model.syntax;
  const n = unparen(value.node);
  if (n.type !== 'attribute' || !/^self\.\w+$/.test(s.text(n)) || frame.init) return undefined;
  const init = ownInit(frame);
  const stored = init && lastAssigned(init, s.text(n), init.at.fn.node.end);
  const param = stored && unparen(stored.node);
  if (!init || !param || param.type !== 'identifier' || lastAssigned(init, s.text(param), param.start) !== null)
    return undefined;
  const index = init.at.fn.params.findIndex((p) => p.name === s.text(param));
  const cls = models.classNamed(frame.at.path, init.at.fn.className ?? '');
  if (index < 0 || !cls) return undefined;
  return models.constructionSites(cls).flatMap((site) => {
    const bound = boundArgument({ at: init.at, call: site.call, caller: { at: site.at } }, s.text(param));
    return bound ? [bound] : [{ node: site.call, frame: { at: site.at } }];
  });
}

/** The one return a helper's frame reaches. */
function helperReturn(frame: Frame): Value | undefined {
  const returns = frame.at.fn.nodes.filter((n) => n.type === 'return_statement');
  const value = returns.length === 1 ? named(returns[0])[0] : undefined;
  return value && { node: value, frame };
}
