// Preloaded into a cold CLI process by bench/scale.bench.ts: reports the process's peak resident memory on exit,
// so the benchmark measures memory as the user's process sees it rather than the parent's.
process.on('exit', () => {
  process.stderr.write(`\npeak-rss-kB ${process.resourceUsage().maxRSS}\n`);
});
