// The records the program (program.ts) keeps of each file's two passes, and the scans that fill them.
import type { ModuleAnalysis } from './module-analysis';
import { importedCallee, type HelperSummary } from './summaries';
import type { AnalysisResult } from './types';
import type { MovedFinding } from './moved-findings';
import type { ConstructionSite, ConstructorArgument, ConstructorRequest } from './class-summaries';
import { requestKey } from './class-links';
import type { FileNormalisers } from './local-normaliser';
import type { ScalingLookups } from './scaled-attributes';

import type { DefinitionLookups } from './program-definitions';
import type { FunctionTemplate } from './parameter-paths';

export interface FirstPass {
  readonly text: string;
  readonly result: AnalysisResult;
  readonly summaries: readonly HelperSummary[];
  /** Top-level functions of other modules this file calls (`[module, name]`), as its imports write them. */
  readonly calls: readonly { readonly module: string; readonly name: string }[];
  /** The file was parsed (the prefilter let it through, or was off), so `calls` is complete. */
  readonly parsed: boolean;
  /** The calls that build objects, with what their arguments denote (class-summaries.ts). */
  readonly sites: readonly ConstructionSite[];
  /** Constructor parameters of this file's classes whose value only the construction sites can tell. */
  readonly requests: readonly ConstructorRequest[];
  /** The file's top-level functions whose sites read their list parameters (parameter-paths.ts). */
  readonly templates: readonly FunctionTemplate[];
  /** Rescaling reductions and loss normalisers this file defines (local-normaliser.ts). */
  readonly normalisers: FileNormalisers;
  /** What the program-wide index of rescaled attributes answered this pass (scaled-attributes.ts). */
  readonly scalingLookups: ScalingLookups;
  /** What the program's definitions answered this pass (program-definitions.ts), by question and name. */
  readonly definitionLookups: DefinitionLookups;
}

/**
 * The text a call to one of the helpers needs (see importedCallee): `module.name(`, or the name imported (`from m
 * import name`, possibly as another name, or in parentheses over several lines). Helper names are everyday words
 * (`train`, `step`, `sync`), so a plain substring test would send most files of a code base to a second parse.
 */
export function mentionPattern(names: ReadonlySet<string>): RegExp | undefined {
  if (names.size === 0) return undefined;
  const alternatives = [...names]
    .map((n) => n.replace(/[^\w]/g, ''))
    .filter((n) => n !== '')
    .join('|');
  return new RegExp(
    `\\.\\s*(?:${alternatives})\\s*\\(|\\bimport\\s*\\(?[^()\\n]*(?:\\([^)]*)?\\b(?:${alternatives})\\b`,
  );
}

/** A callback that answers nothing and notes each constructor parameter asked for, once. */
export function recordingRequests(requests: ConstructorRequest[]): ConstructorArgument {
  return (r) => {
    if (!requests.some((q) => requestKey(q) === requestKey(r))) requests.push(r);
    return undefined;
  };
}

export interface SecondPass {
  readonly result: AnalysisResult;
  /** What the program-wide index of rescaled attributes answered this pass (scaled-attributes.ts). */
  readonly scalingLookups: ScalingLookups;
  /** Findings that belong in other files, with the file whose analysis found them. */
  readonly elsewhere: readonly MovedFinding[];
}

export interface Links {
  readonly exports: Map<string, Map<string, HelperSummary>>;
  readonly calledElsewhere: Map<string, Set<string>>;
  readonly involved: Set<string>;
}

export function callsOf(analysis: ModuleAnalysis): FirstPass['calls'] {
  const seen = new Set<string>();
  const out: { module: string; name: string }[] = [];
  for (const fn of analysis.model.functions) {
    for (const call of fn.calls) {
      const callee = importedCallee(analysis.model, call);
      if (!callee || seen.has(`${callee.module}:${callee.name}`)) continue;
      seen.add(`${callee.module}:${callee.name}`);
      out.push(callee);
    }
  }
  return out;
}
