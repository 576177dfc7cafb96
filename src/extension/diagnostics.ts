// Live diagnostics for Python files: each edit schedules a debounced analysis (tree-sitter, loaded on first
// use), whose findings become diagnostics with severity overrides, rule links and quick fixes. Untrusted
// workspaces get them too: the analysis only reads text.
import * as vscode from 'vscode';
import type { CoreServices } from './core';
import type { FindingsStore } from './findings-store';
import { KeyedDebouncer } from './glue/debounce';
import {
  findingsToDiagnostics,
  quickFixesAt,
  ruleDocsPath,
  type DiagnosticData,
  type RangeData,
} from './glue/diagnostics-map';
import type { ProgramOptions, PythonAnalyzer } from './analysis-host';
import type { Unanalysed } from '../analysis/types';
import { configFormatOf } from './glue/lens-sites';
import { isManifestFileName } from './glue/manifest-name';

const SEVERITY: Readonly<Record<DiagnosticData['severity'], vscode.DiagnosticSeverity>> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  information: vscode.DiagnosticSeverity.Information,
  hint: vscode.DiagnosticSeverity.Hint,
};

/** Python files, and DeepSpeed JSON configs for their pre-divide rule (CP007). */
function analysable(document: vscode.TextDocument): boolean {
  if (document.languageId === 'python') return true;
  return (
    (document.languageId === 'json' || document.languageId === 'jsonc') &&
    configFormatOf(document.fileName, document.getText()) === 'deepspeed'
  );
}

const toRange = (r: RangeData) => new vscode.Range(r.startLine, r.startCharacter, r.endLine, r.endCharacter);

/** Files on disk are named by their file-system path in the program; other documents by their URI. */
function programPath(uri: vscode.Uri): string {
  return uri.scheme === 'file' ? uri.fsPath : uri.toString();
}

function uriOfProgramPath(path: string): vscode.Uri {
  return /^[a-z][\w+.-]*:/i.test(path) && !/^[a-z]:[\\/]/i.test(path) ? vscode.Uri.parse(path) : vscode.Uri.file(path);
}

export class ScalingDiagnostics implements vscode.CodeActionProvider, vscode.Disposable {
  static readonly metadata: vscode.CodeActionProviderMetadata = {
    providedCodeActionKinds: [vscode.CodeActionKind.QuickFix],
  };
  readonly collection = vscode.languages.createDiagnosticCollection('collective-profiler');
  private readonly debouncer = new KeyedDebouncer();
  private readonly mapped = new Map<string, DiagnosticData[]>();
  private analyzer: Promise<PythonAnalyzer> | undefined;
  private readonly indexing = new vscode.CancellationTokenSource();
  /** Runs the background indexing again, once the analyzer is loaded. */
  private indexer: (() => void) | undefined;

  constructor(
    private readonly ctx: CoreServices,
    private readonly findings: FindingsStore,
  ) {
    ctx.push(
      this.collection,
      vscode.workspace.onDidOpenTextDocument((d) => this.schedule(d, 0)),
      vscode.workspace.onDidChangeTextDocument((e) =>
        this.schedule(e.document, this.ctx.settings.diagnostics.debounceMs),
      ),
      vscode.workspace.onDidCloseTextDocument((d) => this.forget(d.uri)),
      // New options (hints, the world size) start a new program: learn the workspace's helpers again.
      ctx.onDidChangeSettings(() => this.restart()),
      ctx.onDidChangeSystem(() => this.restart()),
    );
    this.reanalyseOpen();
  }

  /** Loads tree-sitter and the grammar once, when the first Python file needs them. */
  private getAnalyzer(): Promise<PythonAnalyzer> {
    this.analyzer ??= import('./lazy')
      .then(async (lazy) => {
        const analyzer = await lazy.loadAnalyzer(this.ctx.extensionUri);
        this.startIndexing(lazy.indexWorkspace, analyzer);
        return analyzer;
      })
      .catch((error) => {
        this.analyzer = undefined;
        throw error;
      });
    return this.analyzer;
  }

  /**
   * Learns the helpers of the workspace's closed Python files in the background (workspace-index.ts), then
   * re-analyses the open documents, so a summing helper in a closed file is judged at an open caller.
   */
  private startIndexing(index: typeof import('./workspace-index').indexWorkspace, analyzer: PythonAnalyzer): void {
    this.indexer = () => this.startIndexing(index, analyzer);
    void (async () => {
      try {
        const indexed = await index(analyzer, await this.programOptions(), this.indexing.token, this.ctx.log);
        if (indexed > 0 && !this.indexing.token.isCancellationRequested) this.reanalyseOpen();
      } catch (error) {
        if (!(error instanceof vscode.CancellationError))
          this.ctx.log.warn(
            `Indexing the workspace for the gradient-scaling check failed: ${error instanceof Error ? error.message : String(error)}`,
          );
      }
    })();
  }

  private schedule(document: vscode.TextDocument, delayMs: number): void {
    if (document.uri.scheme === 'output') return;
    if (isManifestFileName(document.fileName)) {
      // Its pins decide library contracts: the open Python files are judged again with the edited versions. Only
      // files on disk: an old version in a diff view (a `git:` document) pins nothing of the workspace.
      if (document.uri.scheme !== 'file') return;
      this.debouncer.schedule(document.uri.toString(), delayMs, () => void this.updateManifest(document));
      return;
    }
    if (!analysable(document)) return;
    this.debouncer.schedule(document.uri.toString(), delayMs, () => {
      void this.analyse(document);
    });
  }

  private async updateManifest(document: vscode.TextDocument): Promise<void> {
    // Before the analyzer is loaded there is nothing to update: the indexing that follows its loading reads every
    // manifest (open ones with their editor text), and opening a manifest alone need not load tree-sitter.
    if (!this.ctx.settings.diagnostics.enabled || !this.analyzer) return;
    // A failed load was logged where it failed; the manifest then has nothing to update.
    const analyzer = await this.analyzer.catch(() => undefined);
    if (!analyzer) return;
    analyzer.setManifests([{ path: programPath(document.uri), text: document.getText() }]);
    for (const open of vscode.workspace.textDocuments) if (open.languageId === 'python') this.schedule(open, 0);
  }

  /**
   * Reads the package manifests under `base` (the workspace when undefined) into the program, as `check` reads those
   * of the folder it checks: the workspace check calls it before analysing.
   */
  async loadManifests(base: vscode.Uri | undefined, token?: vscode.CancellationToken): Promise<number> {
    const [lazy, analyzer] = await Promise.all([import('./lazy'), this.getAnalyzer()]);
    return lazy.loadManifests(analyzer, base, token);
  }

  private restart(): void {
    this.reanalyseOpen();
    this.indexer?.();
  }

  private reanalyseOpen(): void {
    for (const document of vscode.workspace.textDocuments) this.schedule(document, 0);
  }

  private forget(uri: vscode.Uri): void {
    this.debouncer.cancel(uri.toString());
    this.collection.delete(uri);
    this.mapped.delete(uri.toString());
    this.findings.delete(uri);
  }

  /** Analyses one document and publishes its diagnostics; a document edited meanwhile is analysed again later. */
  async analyse(document: vscode.TextDocument): Promise<readonly vscode.Diagnostic[]> {
    const settings = this.ctx.settings.diagnostics;
    if (!settings.enabled) {
      this.forget(document.uri);
      return [];
    }
    const version = document.version;
    const started = Date.now();
    const analyzer = await this.getAnalyzer();
    const result =
      document.languageId === 'python'
        ? analyzer.analyze(programPath(document.uri), document.getText(), await this.programOptions())
        : analyzer.analyzeDeepSpeed(document.getText());
    if (document.isClosed || document.version !== version) return [];
    for (const note of result.notes) this.ctx.log.debug(`${vscode.workspace.asRelativePath(document.uri)}: ${note}`);
    const data = findingsToDiagnostics(result.findings, settings.rules, (code) =>
      vscode.Uri.joinPath(this.ctx.extensionUri, ruleDocsPath(code)).toString(),
    );
    const diagnostics = data.map((d) => this.toDiagnostic(d, document.uri));
    this.findings.set(document.uri, result.findings);
    this.mapped.set(document.uri.toString(), data);
    this.collection.set(document.uri, diagnostics);
    this.ctx.log.trace(
      `Analysed ${vscode.workspace.asRelativePath(document.uri)} in ${Date.now() - started} ms: ${diagnostics.length} findings`,
    );
    return diagnostics;
  }

  /**
   * Analyses files as one program (the workspace check): open documents with their editor text, the others as read
   * from disk. Publishes nothing; returns each file's diagnostics and what of it was not analysed.
   */
  async analyseFiles(
    files: readonly { uri: vscode.Uri; text: string }[],
    pause: (index: number) => Promise<void>,
  ): Promise<Map<string, { diagnostics: vscode.Diagnostic[]; unanalysed: readonly Unanalysed[] }>> {
    const analyzer = await this.getAnalyzer();
    const results = await analyzer.analyzeAll(
      files.map((f) => ({ path: programPath(f.uri), text: f.text })),
      await this.programOptions(),
      pause,
    );
    const out = new Map<string, { diagnostics: vscode.Diagnostic[]; unanalysed: readonly Unanalysed[] }>();
    for (const f of files) {
      const result = results.get(programPath(f.uri));
      const data = findingsToDiagnostics(result?.findings ?? [], this.ctx.settings.diagnostics.rules, (code) =>
        vscode.Uri.joinPath(this.ctx.extensionUri, ruleDocsPath(code)).toString(),
      );
      out.set(f.uri.toString(), {
        diagnostics: data.map((d) => this.toDiagnostic(d, f.uri)),
        unanalysed: result?.unanalysed ?? [],
      });
    }
    return out;
  }

  private async programOptions(): Promise<ProgramOptions> {
    return { worldSize: await this.worldSize(), hints: this.ctx.settings.diagnostics.hints };
  }

  private async worldSize(): Promise<number | undefined> {
    // Messages name the selected system's rank count, and a hard-coded divisor is judged against it (CP003).
    const { selectedSystem } = await import('./system');
    const selected = await selectedSystem(this.ctx);
    return selected.ok ? selected.system.ranks : undefined;
  }

  private toDiagnostic(d: DiagnosticData, uri: vscode.Uri): vscode.Diagnostic {
    const diagnostic = new vscode.Diagnostic(toRange(d.range), d.message, SEVERITY[d.severity]);
    diagnostic.source = d.source;
    diagnostic.code = { value: d.code.value, target: vscode.Uri.parse(d.code.target) };
    // The evidence chain (the reduction, the update, a helper in another file) as related information.
    diagnostic.relatedInformation = d.related.map(
      (r) =>
        new vscode.DiagnosticRelatedInformation(
          new vscode.Location(r.file ? uriOfProgramPath(r.file) : uri, toRange(r.range)),
          r.message,
        ),
    );
    return diagnostic;
  }

  provideCodeActions(document: vscode.TextDocument, range: vscode.Range | vscode.Selection): vscode.CodeAction[] {
    const data = this.mapped.get(document.uri.toString()) ?? [];
    const findings = this.findings.get(document.uri);
    const at = {
      startLine: range.start.line,
      startCharacter: range.start.character,
      endLine: range.end.line,
      endCharacter: range.end.character,
    };
    return quickFixesAt(findings, data, at).map((action) => {
      const fix = new vscode.CodeAction(action.title, vscode.CodeActionKind.QuickFix);
      fix.isPreferred = action.preferred;
      fix.edit = new vscode.WorkspaceEdit();
      for (const e of action.edits) fix.edit.replace(document.uri, toRange(e.range), e.newText);
      fix.diagnostics = (this.collection.get(document.uri) ?? []).filter(
        (d) =>
          typeof d.code === 'object' &&
          d.code.value === action.diagnostic.code.value &&
          d.range.isEqual(toRange(action.diagnostic.range)),
      );
      return fix;
    });
  }

  dispose(): void {
    this.indexing.cancel();
    this.indexing.dispose();
    this.debouncer.dispose();
  }
}
