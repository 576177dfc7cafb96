// The program's view for library contracts: each Python file's classes (parsed only when the text can define a
// trainer, cached by text) and the package pins of the workspace's manifests. Manifests apply to the files in
// their folder and below; `require_version("transformers…")` calls and setup.py apply to the whole program.
import type { Parser } from 'web-tree-sitter';
import { applyIgnoreComments } from '../ignore';
import { isTestCode } from '../analyze';
import type { Finding } from '../types';
import { readClasses, type FileClasses } from './trainer-classes';
import { pinsInText, type Pin } from './versions';
import { trainerContractFindings, type TrainerWorkspace } from './hf-trainer';
import { tailWindowFindings } from './tail-window';
import { inheritedLossFindings } from './inherited-loss';
import { PipelineIndex } from './pipeline-index';
import { ExpertIndex } from './expert-gradients';
import { ExpertMeshIndex } from './expert-mesh-index';
import { SequenceParallelIndex } from './sequence-parallel-slice';
import { LossScalerIndex } from './loss-scalers';
import { CallbackScheduleIndex } from './callback-schedule';
import type { CallbackLoss } from './callback-arguments';
import { OptimizerWrapperIndex } from './optimizer-wrappers';
import { ProgramModels } from './program-models';
import { engineWindowProgramFindings } from './engine-window-program';

const PACKAGE = 'transformers';

interface Entry {
  readonly text: string;
  /**
   * The text defines a `compute_loss` or `training_step`, or a class whose bases name a Trainer (which may inherit
   * the Trainer's `compute_loss`): read once per text, as the editor asks on every edit.
   */
  readonly overrides: boolean;
  readonly classes?: FileClasses;
  readonly pins: readonly Pin[];
}

export class ContractIndex {
  private readonly files = new Map<string, Entry>();
  private readonly manifests = new Map<string, readonly Pin[]>();
  private readonly pipelines: PipelineIndex;
  private readonly experts: ExpertIndex;
  private readonly expertMeshes: ExpertMeshIndex;
  private readonly slices: SequenceParallelIndex;
  private readonly scalers: LossScalerIndex;
  private readonly callbacks: CallbackScheduleIndex;
  private readonly wrappers: OptimizerWrapperIndex;
  /** Every file, parsed on demand, for the traces that cross files (engine-window-program.ts). */
  private readonly models: ProgramModels;

  constructor(
    private readonly parser: Parser,
    private readonly resolveModule: (from: string, module: string) => string | undefined,
  ) {
    this.pipelines = new PipelineIndex(parser);
    this.experts = new ExpertIndex(parser);
    this.expertMeshes = new ExpertMeshIndex(parser);
    this.slices = new SequenceParallelIndex(parser);
    this.scalers = new LossScalerIndex(parser);
    this.callbacks = new CallbackScheduleIndex(parser, resolveModule);
    this.wrappers = new OptimizerWrapperIndex(parser, resolveModule);
    this.models = new ProgramModels(parser, resolveModule);
  }

  setFile(path: string, text: string): void {
    this.pipelines.setFile(path, text);
    this.experts.setFile(path, text);
    this.expertMeshes.setFile(path, text);
    this.slices.setFile(path, text);
    this.scalers.setFile(path, text);
    this.callbacks.setFile(path, text);
    this.wrappers.setFile(path, text);
    this.models.setFile(path, text);
    if (this.files.get(path)?.text === text) return;
    // Read lazily: most files never define a trainer, and the editor sets files long before it asks.
    this.files.set(path, {
      text,
      overrides: /def (compute_loss|training_step)\b|\bclass\s+\w+\s*\([^)]*Trainer/.test(text),
      pins: pythonPins(path, text),
    });
  }

  removeFile(path: string): void {
    this.files.delete(path);
    this.manifests.delete(path);
    this.pipelines.removeFile(path);
    this.experts.removeFile(path);
    this.expertMeshes.removeFile(path);
    this.slices.removeFile(path);
    this.scalers.removeFile(path);
    this.callbacks.removeFile(path);
    this.wrappers.removeFile(path);
    this.models.removeFile(path);
  }

  /** What the program passes to a callable parameter of a top-level function (callback-arguments.ts). */
  callbackLoss(path: string, fnName: string, param: string, counts: ReadonlySet<string>): CallbackLoss {
    return this.callbacks.callbackLoss(path, fnName, param, counts);
  }

  /** The step path of a wrapper class reduces in `method` and divides by a constructed batch (optimizer-wrappers.ts). */
  stepDividesByConstructedBatch(path: string, cls: string, method: string): boolean {
    return this.wrappers.stepDividesByConstructedBatch(path, cls, method);
  }

  /** requirements*.txt, setup.cfg or pyproject.toml (see versions.ts, isManifest). */
  setManifest(path: string, text: string): void {
    this.manifests.set(path, pinsInText(path, text, PACKAGE));
  }

  /** The findings of the contracts for the given files, with test code and ignore comments applied. */
  findings(
    paths: readonly string[],
    options: { hints?: boolean; scopeOf: (path: string) => string },
  ): Map<string, Finding[]> {
    const isTest = (path: string) => isTestCode(options.scopeOf(path)) && !options.hints;
    const schedules = this.pipelines.findings(new Set(paths), isTest);
    const experts = this.experts.findings(new Set(paths), isTest);
    const meshes = this.expertMeshes.findings(new Set(paths), isTest);
    const slices = this.slices.findings(new Set(paths), isTest);
    const scalers = this.scalers.findings(new Set(paths), isTest);
    const callbacks = this.callbacks.findings(new Set(paths), isTest);
    const wrappers = this.wrappers.findings(new Set(paths), isTest);
    // The engine window across files is an error where the engine's configured window is proven, else a hint.
    const windows = engineWindowProgramFindings(this.models, new Set(paths), isTest, options.hints === true);
    const trainers = this.trainerFindings(paths, options);
    for (const [path, list] of [
      ...schedules,
      ...experts,
      ...meshes,
      ...slices,
      ...scalers,
      ...callbacks,
      ...wrappers,
      ...windows,
    ]) {
      const kept = applyIgnoreComments(list, this.files.get(path)?.text ?? '');
      if (kept.length > 0) trainers.set(path, [...(trainers.get(path) ?? []), ...kept]);
    }
    return trainers;
  }

  private trainerFindings(
    paths: readonly string[],
    options: { hints?: boolean; scopeOf: (path: string) => string },
  ): Map<string, Finding[]> {
    // Nothing is judged without a Trainer subclass or an override of compute_loss or training_step, and nothing is
    // proven without a pin: then no file needs the parse (most code bases).
    const overrides = [...this.files.values()].some((e) => e.overrides);
    const pinned =
      [...this.files.values()].some((e) => e.pins.length > 0) || [...this.manifests.values()].some((p) => p.length > 0);
    if (!overrides || (!pinned && !options.hints)) return new Map();
    const files = new Map<string, FileClasses>();
    for (const [path, entry] of this.files) {
      const classes = this.classesOf(path, entry);
      if (classes && (classes.classes.length > 0 || classes.patchesLoop || classes.passesLossFunc))
        files.set(path, classes);
    }
    const wanted = new Set(paths);
    const programPins = [...this.files.values()].flatMap((e) => e.pins);
    const ws: TrainerWorkspace = {
      files,
      resolve: this.resolveModule,
      pinsFor: (path) => [
        ...programPins.filter((p) => !p.file.endsWith('setup.py') || path.startsWith(folderOf(p.file))),
        ...this.manifestPins(path),
      ],
    };
    const found = trainerContractFindings(ws, options.hints === true);
    for (const [path, list] of tailWindowFindings(ws)) found.set(path, [...(found.get(path) ?? []), ...list]);
    for (const [path, list] of inheritedLossFindings(ws)) found.set(path, [...(found.get(path) ?? []), ...list]);
    const out = new Map<string, Finding[]>();
    for (const [path, list] of found) {
      if (!wanted.has(path)) continue;
      if (isTestCode(options.scopeOf(path)) && !options.hints) continue;
      const kept = applyIgnoreComments(list, this.files.get(path)?.text ?? '');
      if (kept.length > 0) out.set(path, kept);
    }
    return out;
  }

  private classesOf(path: string, entry: Entry): FileClasses | undefined {
    if ('classes' in entry) return entry.classes;
    let classes: FileClasses | undefined;
    try {
      classes = readClasses(this.parser, entry.text);
    } catch {
      classes = undefined;
    }
    this.files.set(path, { ...entry, classes });
    return classes;
  }

  private manifestPins(path: string): Pin[] {
    const out: Pin[] = [];
    for (const [manifest, pins] of this.manifests) {
      if (path.startsWith(folderOf(manifest))) out.push(...pins);
    }
    return out;
  }
}

/** `a/b/setup.py` → `a/b/`; a file at the root → ``. The editor names files by `\\`-separated paths on Windows. */
function folderOf(path: string): string {
  return path.slice(0, Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

/** setup.py states requirements in string literals; other files only through `require_version(…)`. */
function pythonPins(path: string, text: string): Pin[] {
  if (!text.includes(PACKAGE)) return [];
  const file = path.split('/').pop();
  if (file === 'setup.py') return pinsInText(path, text, PACKAGE);
  if (!text.includes('require_version')) return [];
  const lines = text.split('\n').map((line) => (/require_version\w*\s*\(/.test(line) ? line : ''));
  return pinsInText(path, lines.join('\n'), PACKAGE);
}
