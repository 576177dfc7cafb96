// The program's view for the pipeline-schedule contract: each file's pipelining facts, read lazily and cached by
// text. Files are parsed only once some file imports torch.distributed.pipelining, and then only those that name
// it or call `.step(`, so a code base without pipeline parallelism costs one substring test per file.
import type { Parser } from 'web-tree-sitter';
import type { Finding } from '../types';
import { mayConcernSchedules, readPipelineFacts } from './pipeline-facts';
import type { PipelineFacts } from './pipeline-fact-types';
import { pipelineScheduleFindings } from './pipeline-schedules';

interface Entry {
  readonly text: string;
  readonly importsPipelining: boolean;
  facts?: PipelineFacts | null;
}

export class PipelineIndex {
  private readonly files = new Map<string, Entry>();

  constructor(private readonly parser: Parser) {}

  setFile(path: string, text: string): void {
    if (this.files.get(path)?.text === text) return;
    this.files.set(path, { text, importsPipelining: /torch\.distributed\.pipelining/.test(text) });
  }

  removeFile(path: string): void {
    this.files.delete(path);
  }

  /** CP002 findings of the schedules that scale the gradients again at each step of an accumulation window. */
  findings(wanted: ReadonlySet<string>, isTest: (path: string) => boolean): Map<string, Finding[]> {
    if (![...this.files.values()].some((e) => e.importsPipelining)) return new Map();
    const builds = [...this.files.values()].some((e) => e.importsPipelining && this.factsOf(e)?.constructions.length);
    if (!builds) return new Map();
    const facts = new Map<string, PipelineFacts>();
    for (const [path, entry] of this.files) {
      if (!mayConcernSchedules(entry.text)) continue;
      const f = this.factsOf(entry);
      if (f) facts.set(path, f);
    }
    const out = new Map<string, Finding[]>();
    for (const [path, list] of pipelineScheduleFindings(facts, isTest)) if (wanted.has(path)) out.set(path, list);
    return out;
  }

  private factsOf(entry: Entry): PipelineFacts | undefined {
    if (entry.facts === undefined) {
      try {
        entry.facts = readPipelineFacts(this.parser, entry.text) ?? null;
      } catch {
        entry.facts = null;
      }
    }
    return entry.facts ?? undefined;
  }
}
