// Drives `decision mcp` with the official TypeScript SDK's client, in front of the official
// filesystem server (both installed, pinned, by .ci/mcp.sh): once over stdio, once over
// Streamable HTTP (`--listen`). A read runs; write_file and move_file are refused and no file
// changes; every log verifies. Usage: node mcp_ts_client.mjs DECISION_BIN SERVER_JS WORKDIR
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [DECISION, SERVER, WORK] = process.argv.slice(2);
const ROOT = join(WORK, "root");
mkdirSync(ROOT, { recursive: true });
const note = join(ROOT, "note.txt");
writeFileSync(note, "first line\n");

function check(condition, what) {
  if (!condition) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
}

const text = (result) => result.content.map((c) => c.text ?? "").join("");

async function exercise(client, how) {
  const tools = (await client.listTools()).tools.map((t) => t.name);
  check(tools.includes("read_text_file") && tools.includes("write_file"), `${how}: tools listed`);
  const read = await client.callTool({ name: "read_text_file", arguments: { path: note } });
  check(!read.isError && text(read).includes("first line"), `${how}: the read ran`);
  for (const [name, args] of [
    ["write_file", { path: note, content: "overwritten" }],
    ["move_file", { source: note, destination: join(ROOT, "moved.txt") }],
  ]) {
    const res = await client.callTool({ name, arguments: args });
    check(res.isError && text(res).includes("decision gateway refused"), `${how}: ${name} refused`);
  }
  check(readFileSync(note, "utf8") === "first line\n" && !existsSync(join(ROOT, "moved.txt")), `${how}: nothing changed`);
}

function verify(log) {
  const out = spawnSync(DECISION, ["replay", "--require-seal", log], { encoding: "utf8", timeout: 60000 });
  check(out.status === 0 && out.stdout.includes("seal: sealed"), `${log} verifies: ${out.stdout}${out.stderr}`);
}

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

async function overStdio() {
  const log = join(WORK, "ts-stdio.jsonl");
  const transport = new StdioClientTransport({
    command: DECISION,
    args: ["mcp", "--log", log, "--approvals", "deny", "--", "node", SERVER, ROOT],
    stderr: "ignore",
  });
  const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
  await client.connect(transport);
  await exercise(client, "stdio");
  await client.close();
  for (let i = 0; i < 100 && !readFileSync(log, "utf8").includes('"seal"'); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  verify(log);
  console.log("  TypeScript SDK client over stdio: the read ran; write_file and move_file were refused; the log verifies");
}

async function overHttp() {
  const logs = join(WORK, "ts-http-logs");
  const port = await freePort();
  const gateway = spawn(
    DECISION,
    ["mcp", "--log", logs, "--listen", `127.0.0.1:${port}`, "--approvals", "deny", "--", "node", SERVER, ROOT],
    { stdio: ["ignore", "ignore", "ignore"] },
  );
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  let client;
  for (let i = 0; i < 200 && !client; i++) {
    try {
      const candidate = new Client({ name: "ts-sdk-test", version: "1.0.0" });
      await candidate.connect(new StreamableHTTPClientTransport(url));
      client = candidate;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  check(client, "the listening gateway accepts the client");
  await exercise(client, "Streamable HTTP");
  await client.transport.terminateSession();
  await client.close();
  const exited = new Promise((resolve) => gateway.on("exit", resolve));
  gateway.kill("SIGTERM");
  check((await exited) === 0, "the gateway stops on SIGTERM");
  const written = readdirSync(logs).filter((f) => f.endsWith(".jsonl"));
  check(written.length >= 1, "a session log was written");
  for (const name of written) {
    const out = spawnSync(DECISION, ["replay", "--require-seal", "--allow-empty", join(logs, name)], { encoding: "utf8" });
    check(out.status === 0 && out.stdout.includes("seal: sealed"), `${name} verifies: ${out.stdout}`);
  }
  console.log(`  TypeScript SDK client over Streamable HTTP (--listen): the same; ${written.length} session log(s) verify`);
}

await overStdio();
await overHttp();
