// Public surface of the analysis layer.
export { analyzePython, DEFAULT_MAX_CHARS } from './analyze';
export { Program } from './program';
export { ModuleIndex } from './module-index';
export { mayHaveFindings } from './select';
export { isManifest } from './contracts/versions';
export { isSkippedFolder, SKIPPED_FOLDERS_GLOB } from './skipped-folders';
export { analyzeDeepSpeedConfig } from './deepspeed-rule';
export { applyEdits } from './edits';
export { RULES, RULE_CODES, ruleInfo, isRuleCode, type RuleInfo } from './rules';
export {
  parseCorpusHeader,
  confusionTable,
  formatConfusionTable,
  type CorpusExpectation,
  type CorpusOutcome,
  type ConfusionRow,
} from './corpus';
export type {
  AnalysisOptions,
  AnalysisResult,
  Finding,
  Fix,
  RelatedLocation,
  RuleCode,
  Severity,
  SourceRange,
  TextEdit,
  Unanalysed,
  UnanalysedReason,
} from './types';
