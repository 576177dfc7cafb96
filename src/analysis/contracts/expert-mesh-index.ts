// The program-wide index of the expert-mesh proof (expert-mesh-average.ts): each file's facts read once per text
// (backward averagers, mesh builders, dispatch styles and their applications), the functions that call an averager
// read where an averager exists, and one CP003 finding per `Partial("avg")` placement that a proof reaches, at the
// placement (where the divisor is chosen), with the wraps, the dispatch and its application as related locations.
import type { Parser } from 'web-tree-sitter';
import { ruleInfo } from '../rules';
import { parseModule } from '../parse';
import { child, named, type PyNode } from '../tree';
import type { Finding, RelatedLocation, SourceRange } from '../types';
import { readBackwardAveragers, type BackwardAverager } from './backward-placements';
import { proveExpertMeshAverage, type ExpertMeshProof } from './expert-mesh-average';
import type { ProgramFacts } from './expert-mesh-types';
import { readMeshBuilders } from './mesh-dims';
import type { Cond } from './branch-guards';
import { FileSyntax } from './placement-syntax';
import { readDispatchStyles, readStyleApplications, readStyleSubclasses } from './token-dispatch';

const PARSE_BUDGET_MS = 5_000;

/** What a file's text may hold, tested once per text: the editor asks for findings on every edit. */
const KINDS = {
  averager: /grad_placements/,
  style: /ParallelStyle|distribute_module/,
  builder: /init_device_mesh/,
  application: /parallelize_module/,
} as const;

type Kind = keyof typeof KINDS;

interface Entry {
  readonly text: string;
  readonly kinds: ReadonlySet<Kind>;
  /** Whether the text calls a function of that name (asked only for the averagers' names). */
  readonly calls: Map<string, boolean>;
  syntax?: FileSyntax | null;
}

export class ExpertMeshIndex {
  private readonly files = new Map<string, Entry>();

  constructor(private readonly parser: Parser) {}

  setFile(path: string, text: string): void {
    if (this.files.get(path)?.text === text) return;
    const kinds = new Set((Object.keys(KINDS) as Kind[]).filter((k) => KINDS[k].test(text)));
    this.files.set(path, { text, kinds, calls: new Map() });
  }

  removeFile(path: string): void {
    this.files.delete(path);
  }

  findings(wanted: ReadonlySet<string>, isTest: (path: string) => boolean): Map<string, Finding[]> {
    const out = new Map<string, Finding[]>();
    const program = (test: (e: Entry) => boolean) =>
      [...this.files]
        .filter(([path, e]) => !isTest(path) && test(e))
        .flatMap(([path, e]) => {
          const syntax = this.syntaxOf(e);
          return syntax ? [{ path, syntax }] : [];
        });
    // Most programs define no parametrization with backward placements: nothing else is parsed for them.
    const averagers = program((e) => e.kinds.has('averager')).flatMap(({ path, syntax }) =>
      readBackwardAveragers(syntax).map((item) => ({ path, item })),
    );
    if (averagers.length === 0) return out;
    const styleFiles = program((e) => e.kinds.has('style'));
    const facts: ProgramFacts = {
      averagers,
      builders: program((e) => e.kinds.has('builder')).flatMap(({ syntax }) => readMeshBuilders(syntax)),
      styles: new Map(
        styleFiles.flatMap(({ path, syntax }) =>
          readDispatchStyles(syntax).map((s) => [s.cls, { ...s, path }] as const),
        ),
      ),
      subclasses: new Map(styleFiles.flatMap(({ syntax }) => readStyleSubclasses(syntax)).map((s) => [s.cls, s])),
      applications: program((e) => e.kinds.has('application')).flatMap(({ path, syntax }) =>
        readStyleApplications(syntax).map((item) => ({ path, item, syntax })),
      ),
    };
    const proofs = new Map<string, { path: string; proof: ExpertMeshProof }>();
    for (const averager of averagers) {
      const name = averager.item.fn;
      for (const { path, syntax } of program((e) => callsName(e, name))) {
        if (!callsAverager(syntax, path, name, averager.path)) continue;
        for (const fn of functionsOf(syntax.module)) {
          for (const proof of proveExpertMeshAverage(syntax, fn, name, averager, facts)) {
            const key = `${averager.path}:${averager.item.placement.line}`;
            if (!proofs.has(key)) proofs.set(key, { path, proof });
          }
        }
      }
    }
    for (const { path, proof } of proofs.values()) {
      const at = proof.averager.path;
      if (!wanted.has(at)) continue;
      out.set(at, [...(out.get(at) ?? []), finding(at, path, proof, this.syntaxOf(this.files.get(path)!)!)]);
    }
    return out;
  }

  private syntaxOf(entry: Entry): FileSyntax | undefined {
    if (entry.syntax === undefined) {
      try {
        const parsed = parseModule(this.parser, entry.text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
        entry.syntax = 'module' in parsed ? new FileSyntax(parsed.module, parsed.source) : null;
      } catch {
        entry.syntax = null;
      }
    }
    return entry.syntax ?? undefined;
  }
}

function callsName(entry: Entry, name: string): boolean {
  let calls = entry.calls.get(name);
  if (calls === undefined) {
    calls = new RegExp(`\\b${name}\\(`).test(entry.text);
    entry.calls.set(name, calls);
  }
  return calls;
}

/** The file defines the averager, or imports it by name from a module whose last part is the averager's file. */
function callsAverager(syntax: FileSyntax, path: string, name: string, definedIn: string): boolean {
  if (path === definedIn) return true;
  const imported = syntax.imports.get(name);
  const stem = definedIn.replace(/^.*\//, '').replace(/\.py$/, '');
  return imported !== undefined && new RegExp(`(^|\\.)${stem}\\.${name}$`).test(imported);
}

function functionsOf(module: PyNode): PyNode[] {
  return named(module)
    .map((n) => (n.type === 'decorated_definition' ? child(n, 'definition') : n))
    .filter((n): n is PyNode => n?.type === 'function_definition');
}

function finding(path: string, wrapPath: string, proof: ExpertMeshProof, wraps: FileSyntax): Finding {
  const at = (file: string, range: SourceRange, message: string): RelatedLocation => ({
    range,
    message,
    ...(file === path ? {} : { file }),
  });
  const names = (dims: readonly { name: string }[]) => dims.map((d) => `\`${d.name}\``).join(' × ');
  const expert = wraps.text(wraps.args(proof.expertWrap).positional[0]);
  const a: BackwardAverager = proof.averager.item;
  const outside =
    proof.outside.length > 0
      ? ` (When ${proof.outside.map((d) => `\`${d.name}\``).join(', ')} also joins \`${proof.dispatchMesh}\`, those ranks are outside the data-parallel mesh and the factor is the part of it inside: ${names(proof.extra)}.)`
      : '';
  const branch =
    proof.branch.length > 0
      ? ` (where it is chosen under \`${[...proof.branch]
          .reverse()
          .map((g) => ('or' in g ? `(${condText(g)})` : condText(g)))
          .join(' and ')}\`)`
      : '';
  const message =
    `This \`Partial("avg")\` averages the gradients of the modules \`${a.fn}\` wraps over the wrapping call's mesh, and \`${a.fn}(${expert}, ${proof.expertMesh}, …)\` wraps the experts with \`${proof.expertMesh}\`, which lacks ${names(proof.extra)} of the data-parallel mesh \`${proof.modelMesh}\` the rest of the model is averaged over${branch}. ` +
    `The experts' inputs come through a token dispatch (\`${proof.dispatch.cls}\`) over \`${proof.dispatchMesh}\`, whose backward already sums into each expert's gradient the contributions of every rank of that mesh. ` +
    `So the expert gradients are |ep|× (the size of \`${proof.dispatchMesh}\`, ${names(proof.extra)}) the mean over the data-parallel replicas that the other parameters get: the experts' effective learning rate is |ep| times the configured one.${outside} ` +
    `Divide the expert gradients by the size of the whole data-parallel mesh (\`${proof.modelMesh}\`) instead, e.g. with a Partial placement that divides by that factor and sums, as FSDP2's \`set_gradient_divide_factor\` does.`;
  const related = [
    at(wrapPath, wraps.source.range(proof.expertWrap), `the experts are wrapped with \`${proof.expertMesh}\` here`),
    at(
      wrapPath,
      wraps.source.range(proof.modelWrap),
      `the rest of the model is wrapped with \`${proof.modelMesh}\` here`,
    ),
    at(
      proof.application.path,
      proof.application.item.site.range,
      `the \`${proof.dispatch.cls}\` plan is applied to the experts here`,
    ),
    at(
      proof.dispatch.path,
      proof.dispatch.dispatch.range,
      'the tokens are dispatched here: the backward sums every rank’s contributions',
    ),
  ];
  return { code: 'CP003', severity: ruleInfo('CP003').severity, range: a.placement.range, message, related, fixes: [] };
}

function condText(c: Cond): string {
  if ('atom' in c) return c.atom;
  if ('not' in c) return `not (${condText(c.not)})`;
  return ('and' in c ? c.and : c.or).map(condText).join('and' in c ? ' and ' : ' or ');
}
