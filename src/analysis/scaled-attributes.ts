// Object attributes that the program rescales in place, for the sum rule (CP001/CP004). A buffer held on an object
// (`self.grad_data`) outlives the function that reduces it: Megatron-LM's bucket all-reduces `self.grad_data`, and
// the division by the data-parallel size happens later, elsewhere, in a method that multiplies the same attribute
// (`ParamAndGradBuffer.scale_gradients`: `self.grad_data *= scaling_factor`), called through a configuration
// callback (`config.finalize_model_grads_func`) that the call graph does not follow. A claim that "no division
// follows" cannot be proved for such a buffer, so the rule stays silent when some function of the program scales an
// attribute of the same name by a factor that is not the literal 1, and that function is referenced somewhere else
// in the program (called, or passed on as a callback): a scaling method that nothing names is dead code and
// compensates nothing. The index reads the texts, not the parse trees, because most files of a workspace are never
// parsed (select.ts); each file's rescalings are kept by its text, and a reference answer is dropped only when the
// changed file's text, before or after, names the function, so an edit re-reads that one file. It reads them without their comments and string literals
// (python-code.ts): `# self.grad_data *= f` rescales nothing. A reference may be a string (`getattr(m, "scale")`),
// so only comments are left out when references are counted.

import { withoutComments, withoutCommentsAndStrings } from './python-code';

/** One in-place rescaling of an attribute: `obj.attr *= f`, `obj.attr /= f`, `obj.attr.mul_(f)`, `obj.attr.div_(f)`. */
export interface AttributeScaling {
  readonly attribute: string;
  /** The function whose body rescales it, or undefined at module level. */
  readonly functionName: string | undefined;
  readonly path: string;
  readonly line: number;
}

const AUGMENTED = /\.([A-Za-z_]\w*)\s*(?:\*=|\/=)\s*([^\n]+)/g;
const METHOD = /\.([A-Za-z_]\w*)\.(?:mul_|div_)\(\s*([^\n]*)/g;
const CANDIDATE = /\.[A-Za-z_]\w*(?:\s*(?:\*=|\/=)|\.(?:mul_|div_)\()/;
const DEF = /^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/;

/** True when the factor as written is 1 (`1`, `1.0`): such a scaling changes nothing. */
function isOne(factor: string): boolean {
  const head = factor
    .trim()
    .replace(/\)\s*$/, '')
    .trim();
  return /^1(\.0*)?$/.test(head);
}

/** The in-place rescalings of attributes in one file, each with the function that encloses it. */
export function attributeScalings(path: string, source: string): AttributeScaling[] {
  // Blanking costs a pass over the text: a file whose raw text holds no rescaling cannot hold one in its code.
  if (!/\*=|\/=|mul_\(|div_\(/.test(source) || !CANDIDATE.test(source)) return [];
  const text = withoutCommentsAndStrings(source);
  const out: AttributeScaling[] = [];
  // Enclosing functions by indentation: a stack of (indent, name); a line at or left of a def's indent closes it.
  const stack: { indent: number; name: string }[] = [];
  text.split('\n').forEach((line, i) => {
    const trimmed = line.trimStart();
    if (trimmed === '') return;
    const indent = line.length - trimmed.length;
    while (stack.length > 0 && indent <= stack[stack.length - 1].indent) stack.pop();
    const def = DEF.exec(line);
    if (def) {
      stack.push({ indent, name: def[2] });
      return;
    }
    for (const pattern of [AUGMENTED, METHOD]) {
      pattern.lastIndex = 0;
      for (let m = pattern.exec(line); m; m = pattern.exec(line)) {
        if (isOne(m[2])) continue;
        out.push({ attribute: m[1], functionName: stack[stack.length - 1]?.name, path, line: i });
      }
    }
  });
  return out;
}

/** The attribute names in the texts of a reduced tensor (`self.grad_data` → `grad_data`), method calls excluded. */
export function reducedAttributes(texts: readonly string[]): string[] {
  const out = new Set<string>();
  for (const text of texts)
    for (const m of text.matchAll(/\.([A-Za-z_]\w*)\b(?!\s*\()/g))
      if (m[1] !== 'grad' && m[1] !== 'data') out.add(m[1]);
  return [...out];
}

/**
 * The attribute lookups one analysis made, with whether each found a rescaling. A file's cached analysis is only as
 * fresh as these answers: an edit of another file can add or remove the rescaling method they relied on.
 */
export type ScalingLookups = Map<string, boolean>;

/** The program-wide index: which attribute names some referenced function rescales in place. */
export class ScaledAttributes {
  private byAttribute: Map<string, AttributeScaling[]> | undefined;
  private readonly answers = new Map<string, AttributeScaling | null>();
  /** Each file's rescalings, for the text they were read from. */
  private readonly perFile = new Map<string, { readonly text: string; readonly scalings: AttributeScaling[] }>();
  /** Whether a function name is referenced other than where it is defined, by name. */
  private readonly references = new Map<string, boolean>();

  constructor(private readonly texts: () => Iterable<[string, string]>) {}

  /**
   * Drops what a change of one file's text (`after` undefined: the file was removed) can have changed: the index, and
   * the reference answers for the names either text contains (no other file's answer moved).
   */
  changed(path: string, before: string | undefined, after: string | undefined): void {
    this.byAttribute = undefined;
    this.answers.clear();
    if (after === undefined) this.perFile.delete(path);
    for (const name of this.references.keys())
      if (before?.includes(name) || after?.includes(name)) this.references.delete(name);
  }

  /**
   * A rescaling of an attribute of this name, in a function that is referenced elsewhere in the program than its own
   * definition (or at module level); undefined when there is none.
   */
  scaling(attribute: string): AttributeScaling | undefined {
    const cached = this.answers.get(attribute);
    if (cached !== undefined) return cached ?? undefined;
    const found = (this.index().get(attribute) ?? []).find(
      (s) => s.functionName === undefined || this.referencedElsewhere(s.functionName),
    );
    this.answers.set(attribute, found ?? null);
    return found;
  }

  /** A lookup for one analysis that notes each answer in `lookups`, to tell later whether they still hold. */
  recording(lookups: ScalingLookups): (attribute: string) => AttributeScaling | undefined {
    return (attribute) => {
      const found = this.scaling(attribute);
      lookups.set(attribute, found !== undefined);
      return found;
    };
  }

  /** True when every noted lookup gives the same answer on the program as it is now. */
  stillHolds(lookups: ScalingLookups): boolean {
    for (const [attribute, found] of lookups) if ((this.scaling(attribute) !== undefined) !== found) return false;
    return true;
  }

  private index(): Map<string, AttributeScaling[]> {
    if (this.byAttribute) return this.byAttribute;
    const map = new Map<string, AttributeScaling[]>();
    for (const [path, text] of this.texts())
      for (const s of this.scalingsOf(path, text)) {
        const list = map.get(s.attribute) ?? [];
        list.push(s);
        map.set(s.attribute, list);
      }
    this.byAttribute = map;
    return map;
  }

  private scalingsOf(path: string, text: string): AttributeScaling[] {
    const cached = this.perFile.get(path);
    if (cached?.text === text) return cached.scalings;
    const scalings = attributeScalings(path, text);
    this.perFile.set(path, { text, scalings });
    return scalings;
  }

  /** True when the name occurs in the program other than where a function of that name is defined. */
  private referencedElsewhere(name: string): boolean {
    let known = this.references.get(name);
    if (known === undefined) {
      known = this.referencedInTexts(name);
      this.references.set(name, known);
    }
    return known;
  }

  private referencedInTexts(name: string): boolean {
    const any = new RegExp(`\\b${name}\\b`, 'g');
    const definition = new RegExp(`\\bdef\\s+${name}\\b`, 'g');
    const uses = (text: string) => (text.match(any) ?? []).length - (text.match(definition) ?? []).length;
    // Blanking comments only removes uses, so a text with none in its raw form is not blanked.
    for (const [, source] of this.texts())
      if (source.includes(name) && uses(source) > 0 && uses(withoutComments(source)) > 0) return true;
    return false;
  }
}
