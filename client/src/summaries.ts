// Words for results the server sends back. Pure.

/** One line about a probe's result, whatever shape the server gives it. */
export function probeSummary(result: unknown): string {
  if (typeof result === 'string' && result.trim() !== '') {
    return result.trim();
  }
  if (result !== null && typeof result === 'object') {
    const record = result as Record<string, unknown>;
    if (typeof record.message === 'string' && record.message.trim() !== '') {
      return record.message.trim();
    }
    const findings = Array.isArray(record.findings) ? record.findings.length
      : Array.isArray(record.diagnostics) ? record.diagnostics.length
        : typeof record.count === 'number' ? record.count : undefined;
    if (findings !== undefined) {
      return findings === 0 ? 'no in-place write clobbered a saved tensor'
        : `${findings} in-place write${findings === 1 ? '' : 's'} clobbered a saved tensor (see Problems)`;
    }
  }
  return 'finished (its findings are in the Problems view)';
}
