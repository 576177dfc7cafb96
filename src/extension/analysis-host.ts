// Loads the analysis layer and its tree-sitter parser on first use, from the .wasm files shipped in dist/, so
// that activation stays fast and files that are never Python never pay for the parser.
import * as vscode from 'vscode';
import type { AnalysisResult } from '../analysis/types';

export interface PythonAnalyzer {
  analyze(text: string, worldSize?: number): AnalysisResult;
  /** CP007: DeepSpeed pre-divide settings, read from the JSON config itself. */
  analyzeDeepSpeed(text: string): AnalysisResult;
}

export async function loadAnalyzer(extensionUri: vscode.Uri): Promise<PythonAnalyzer> {
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  const { createPythonParser } = await import('../analysis/parser');
  // One parser for the session: every analysed file reuses it.
  const parser = await createPythonParser(vscode.Uri.joinPath(dist, 'tree-sitter.wasm').fsPath, vscode.Uri.joinPath(dist, 'tree-sitter-python.wasm').fsPath);
  const analysis = await import('../analysis/index');
  return {
    analyze: (text, worldSize) => analysis.analyzePython(parser, text, { worldSize }),
    analyzeDeepSpeed: (text) => analysis.analyzeDeepSpeedConfig(text),
  };
}
