// Runs dsh's own session-reference code (the JSONL reader, session-query and
// the session-reference resolver, loaded from a dsh source tree) on the cases
// of a manifest and prints one JSON result per case.
//
// Usage: tsx --tsconfig "$DSH_SRC/tsconfig.json" driver.ts MANIFEST.json > RESULTS.json
//
// The manifest is written by the Go side (see main.go):
//   {"stores":[{"root":"…","compression":"zstd"|"none","target":{"id":"…","cwd":"…"},
//     "candidates":[{"id":"…","query":"…","limit":50}],
//     "prepares":[{"id":"…","text":"…","maxReferenceBytes":65536}]}]}
// The result is {"results":{"<case id>":{…}}, "timings":{…}} where a candidate
// case gives {"candidates":[…]} and a prepare case gives
// {"content":"…","references":[…],"prompt":"…","source":{…}} or
// {"error":{"code":"…","message":"…"}}.
//
// With --bench ROUNDS BUDGET_MS DEADLINE_MS the driver instead times every
// case (see bench) for scripts/bench-dsh.sh.
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { Context } from '@deepseek-ai/cordis'
import SessionStore from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-persistence-jsonl'
import SessionQueryEngine from '@deepseek-ai/dsh-session-query'
import SessionReferenceResolver, { parseSessionReferenceText } from '@deepseek-ai/dsh-session-reference'

interface CandidateCase { id: string; query: string; limit: number }
interface PrepareCase { id: string; text: string; maxReferenceBytes: number }
interface StoreCases {
  root: string
  compression: 'zstd' | 'none'
  target: { id: string; cwd?: string }
  candidates: CandidateCase[]
  prepares: PrepareCase[]
}
interface Manifest { stores: StoreCases[] }

// The query engine's full-text search is abstract in dsh and not used by
// session references; these stubs only make the class concrete.
class DiffQueryEngine extends SessionQueryEngine {
  override searchSessions(): ReturnType<SessionQueryEngine['searchSessions']> {
    return Promise.resolve({ items: [] })
  }

  override searchEvents(): ReturnType<SessionQueryEngine['searchEvents']> {
    return Promise.reject(new Error('search is not part of the differential check'))
  }
}

function errorOf(error: unknown): { code: string; message: string } {
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code
    return { code: typeof code === 'string' ? code : 'UNCODED', message: error.message }
  }
  return { code: 'UNCODED', message: String(error) }
}

async function openStore(store: StoreCases): Promise<{ ctx: Context; resolver: SessionReferenceResolver }> {
  const ctx = new Context()
  await ctx.plugin(SessionStore)
  await ctx.plugin(JsonlSessionPersistence, { root: store.root, compression: store.compression })
  await ctx.plugin(DiffQueryEngine)
  await ctx.plugin(SessionReferenceResolver, {})
  return { ctx, resolver: ctx.sessionReferenceResolver }
}

// The agent the message is written in: dsh reads only its id and the cwd of
// its session header.
function agentOf(target: StoreCases['target']): Parameters<SessionReferenceResolver['listCandidates']>[0] {
  const header = target.cwd === undefined ? {} : { cwd: target.cwd }
  return { id: target.id, session: { header } } as unknown as Parameters<SessionReferenceResolver['listCandidates']>[0]
}

// setBudget changes the per-source byte budget of the resolver: dsh reads it
// from its configuration at every prepare, and one resolver serves all cases.
function setBudget(resolver: SessionReferenceResolver, bytes: number): void {
  (resolver as unknown as { config: { maxReferenceBytes: number } }).config.maxReferenceBytes = bytes
}

async function runCandidate(resolver: SessionReferenceResolver, agent: ReturnType<typeof agentOf>, c: CandidateCase, signal?: AbortSignal): Promise<unknown> {
  try {
    return { candidates: await resolver.listCandidates(agent, c.query, c.limit, signal) }
  } catch (error: unknown) {
    return { error: errorOf(error) }
  }
}

async function runPrepare(resolver: SessionReferenceResolver, agent: ReturnType<typeof agentOf>, c: PrepareCase, signal?: AbortSignal): Promise<unknown> {
  try {
    setBudget(resolver, c.maxReferenceBytes)
    const parsed = parseSessionReferenceText(c.text)
    const prepared = await resolver.prepare(agent, [{ type: 'text', text: parsed.text }], parsed.references, signal)
    const first = prepared.content[0]
    const out: Record<string, unknown> = {
      content: first !== undefined && first.type === 'text' ? first.text : null,
      references: parsed.references,
    }
    const context = prepared.additionalContext
    if (context !== undefined) {
      const block = context.content[0]
      out.prompt = block !== undefined && block.type === 'text' ? block.text : null
      out.source = context.source
    }
    return out
  } catch (error: unknown) {
    return { error: errorOf(error) }
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  let rounds = 0
  let budgetMs = 0
  let deadlineMs = 0
  if (args[0] === '--bench') {
    rounds = Number(args[1])
    budgetMs = Number(args[2])
    deadlineMs = Number(args[3])
    args.splice(0, 4)
  }
  const path = args[0]
  if (path === undefined) throw new Error('usage: driver.ts [--bench ROUNDS BUDGET_MS DEADLINE_MS] MANIFEST.json')
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest
  if (rounds > 0) {
    process.stdout.write(`${JSON.stringify(await bench(manifest, rounds, budgetMs, deadlineMs))}\n`)
    return
  }
  const results: Record<string, unknown> = {}
  const reads: Record<string, Record<string, string>> = {}
  for (const store of manifest.stores) {
    const { ctx, resolver } = await openStore(store)
    const agent = agentOf(store.target)
    reads[store.root] = await readStatus(ctx)
    for (const c of store.candidates) results[c.id] = await runCandidate(resolver, agent, c)
    for (const c of store.prepares) results[c.id] = await runPrepare(resolver, agent, c)
    await ctx.dispose?.()
  }
  process.stdout.write(`${JSON.stringify({ results, reads })}\n`)
}

// readStatus says, per listed session, whether dsh reads its log: "ok" or
// the reason it refuses it. A listing failure is reported under "*".
async function readStatus(ctx: Context): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  try {
    const records = await ctx.sessionQuery.listSessions()
    const ids = records.map(record => record.header.id)
    const observations = await ctx.sessionQuery.readTitleSnapshots(ids)
    observations.forEach((observation, index) => {
      out[ids[index] as string] = observation.status === 'fulfilled' ? 'ok' : errorOf(observation.reason).message
    })
  } catch (error: unknown) {
    out['*'] = errorOf(error).message
  }
  return out
}

// bench times every case of every store and reports each case's latencies
// in milliseconds. A case runs once to warm up, then until it has rounds
// samples or has spent budgetMs; a warm-up run slower than a second counts
// as a sample (compiling is then a negligible part of it). A call still
// running after deadlineMs is cancelled through dsh's own AbortSignal
// parameter and reported as {"abortedAfterMs": …}.
async function bench(manifest: Manifest, rounds: number, budgetMs: number, deadlineMs: number): Promise<unknown> {
  const out: Record<string, unknown>[] = []
  for (const store of manifest.stores) {
    const { ctx, resolver } = await openStore(store)
    const agent = agentOf(store.target)
    const timings: Record<string, number[]> = {}
    const aborted: Record<string, number> = {}
    const time = async (id: string, work: (signal: AbortSignal) => Promise<unknown>): Promise<void> => {
      const samples: number[] = []
      let spent = 0
      for (let run = 0; samples.length < rounds && (run === 0 || spent < budgetMs); run++) {
        const signal = AbortSignal.timeout(deadlineMs)
        const start = performance.now()
        const r = await work(signal) as { error?: { code?: string } }
        const elapsed = performance.now() - start
        spent += elapsed
        if (r.error?.code === 'SESSION_REFERENCE_CANCELLED' || signal.aborted) {
          aborted[id] = elapsed
          break
        }
        if (r.error !== undefined) throw new Error(`case ${id} failed: ${JSON.stringify(r.error)}`)
        if (run > 0 || elapsed > 1000) samples.push(elapsed)
      }
      timings[id] = samples
    }
    for (const c of store.candidates) await time(c.id, signal => runCandidate(resolver, agent, c, signal))
    for (const c of store.prepares) await time(c.id, signal => runPrepare(resolver, agent, c, signal))
    out.push({ root: store.root, timings, aborted })
    await ctx.dispose?.()
  }
  return { stores: out }
}

main().catch((error: unknown) => {
  process.stderr.write(`dshdiff driver: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})
