// CP007 for DeepSpeed JSON configs: gradient_predivide_factor and prescale_gradients combinations that change or
// silently drop the gradient scale. DeepSpeed's data-parallel all-reduce either pre-divides by the world size
// (prescale_gradients: true, and then gradient_predivide_factor is never read) or multiplies by
// 1/gradient_predivide_factor before and by gradient_predivide_factor/world_size after the all-reduce.
import { findJsonSyntaxError } from '../config/json-syntax';
import type { AnalysisResult, Finding, SourceRange } from './types';

function rangeAt(text: string, start: number, end: number): SourceRange {
  const before = text.slice(0, start);
  const startLine = before.split('\n').length - 1;
  const startColumn = start - (before.lastIndexOf('\n') + 1);
  const mid = text.slice(0, end);
  const endLine = mid.split('\n').length - 1;
  const endColumn = end - (mid.lastIndexOf('\n') + 1);
  return { startLine, startColumn, endLine, endColumn };
}

/** The span of a top-level key's value: `"key": <value>`, found in the text so findings have positions. */
function valueSpan(text: string, key: string): { keyStart: number; start: number; end: number } | undefined {
  const re = new RegExp(`"${key}"\\s*:\\s*`, 'g');
  const m = re.exec(text);
  if (!m) return undefined;
  const start = m.index + m[0].length;
  const token = /^("(?:[^"\\]|\\.)*"|-?[0-9.eE+-]+|true|false|null)/.exec(text.slice(start));
  return { keyStart: m.index, start, end: start + (token ? token[0].length : 0) };
}

export function analyzeDeepSpeedConfig(text: string): AnalysisResult {
  const notes: string[] = [];
  const syntaxError = findJsonSyntaxError(text, 64);
  if (syntaxError) {
    const r = rangeAt(text, syntaxError.offset, syntaxError.offset);
    notes.push(`not valid JSON at line ${r.startLine + 1}, column ${r.startColumn + 1}: ${syntaxError.message}`);
    return { findings: [], notes };
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (error) {
    notes.push(`not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
    return { findings: [], notes };
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return { findings: [], notes };
  const c = config as Record<string, unknown>;
  const findings: Finding[] = [];
  const factor = c.gradient_predivide_factor;
  const span = valueSpan(text, 'gradient_predivide_factor');
  const prescale = c.prescale_gradients === true;
  if (factor !== undefined && span) {
    const range = rangeAt(text, span.keyStart, span.end);
    const valueRange = rangeAt(text, span.start, span.end);
    const reset = { title: 'Set gradient_predivide_factor to 1.0', edits: [{ range: valueRange, newText: '1.0' }] };
    if (typeof factor !== 'number' || !Number.isFinite(factor) || factor <= 0) {
      findings.push({
        code: 'CP007',
        severity: 'error',
        range,
        message: `gradient_predivide_factor must be a positive number (got ${JSON.stringify(factor)}): DeepSpeed multiplies the gradients by 1/${JSON.stringify(factor)} before the all-reduce and by ${JSON.stringify(factor)}/N after it, so this breaks or flips the gradient scale.`,
        related: [],
        fixes: [reset],
      });
    } else if (prescale && factor !== 1) {
      const prescaleSpan = valueSpan(text, 'prescale_gradients');
      const fixes = [reset];
      if (prescaleSpan)
        fixes.push({
          title: 'Set prescale_gradients to false (use the pre-divide factor)',
          edits: [{ range: rangeAt(text, prescaleSpan.start, prescaleSpan.end), newText: 'false' }],
        });
      findings.push({
        code: 'CP007',
        severity: 'warning',
        range,
        message: `gradient_predivide_factor ${factor} has no effect with prescale_gradients: true: DeepSpeed then divides the gradients by the world size N before the all-reduce and never reads the factor (ZeRO rejects the combination). The gradients are still averaged (1×), but not with the pre-divide split you configured.`,
        related: prescaleSpan
          ? [
              {
                range: rangeAt(text, prescaleSpan.keyStart, prescaleSpan.end),
                message: 'prescale_gradients is enabled here',
              },
            ]
          : [],
        fixes,
      });
    }
  }
  if (c.prescale_gradients !== undefined && typeof c.prescale_gradients !== 'boolean') {
    const p = valueSpan(text, 'prescale_gradients');
    if (p)
      findings.push({
        code: 'CP007',
        severity: 'error',
        range: rangeAt(text, p.keyStart, p.end),
        message: `prescale_gradients must be true or false (got ${JSON.stringify(c.prescale_gradients)}); a truthy string would switch the gradient scaling path unexpectedly.`,
        related: [],
        fixes: [
          {
            title: 'Set prescale_gradients to false',
            edits: [{ range: rangeAt(text, p.start, p.end), newText: 'false' }],
          },
        ],
      });
  }
  return { findings, notes };
}
