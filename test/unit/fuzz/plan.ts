// How many inputs each fuzz target gets in CI (`npm test`). The sum is checked to stay at or above 10,000; the
// analysis target gets few and small inputs because parsing Python is the slowest step. `npm run fuzz` scales
// every entry (FUZZ_SCALE).
export const FUZZ_PLAN = {
  systemMutated: 600,
  systemGenerated: 500,
  trainingMutated: 800,
  trainingGenerated: 500,
  deepSpeedRule: 300,
  rawDocuments: 800,
  ncclTestsMutated: 800,
  ncclTestsGenerated: 400,
  ncclLogMutated: 400,
  ncclLogGenerated: 300,
  deepSpeedLogMutated: 300,
  calibrationMutated: 300,
  nativeRun: 300,
  calibrationEdges: 300,
  kinetoMutated: 400,
  kinetoEvents: 600,
  chromeTrace: 400,
  gzip: 120,
  streamedTrace: 300,
  pythonMutated: 160,
  pythonGenerated: 100,
  webviewMessages: 2000,
  panelState: 500,
  workspacePaths: 500,
  hostileSizes: 200,
  hostileConfigValues: 300,
  nonRegularFiles: 100,
  encodings: 400,
  corruptValues: 400,
} as const;

export const CI_MINIMUM_INPUTS = 10_000;

export function plannedTotal(): number {
  return Object.values(FUZZ_PLAN).reduce((a, b) => a + b, 0);
}
