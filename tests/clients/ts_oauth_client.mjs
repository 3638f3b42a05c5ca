// The TypeScript SDK's client with its OAuth flow, as an application uses it: the SDK discovers the
// authorization server, registers, sends the browser ($BROWSER, scripts/oauth_login.py in the
// tests) to the authorization URL with PKCE, and this program's loopback listener takes the code for
// transport.finishAuth. Then tools/list, remember and recall; one JSON line on stdout says what came
// back. Run by tests/mcp_server/test_clients.py:
//
//     node ts_oauth_client.mjs MCP_URL CALLBACK_PORT PROJECT CONTENT QUESTION
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, port, project, content, question] = process.argv.slice(2);
const redirectUrl = `http://127.0.0.1:${port}/callback`;

// The loopback listener: the browser lands here with the code once the person allowed.
let listener;
const code = new Promise((resolve, reject) => {
  listener = createServer((req, res) => {
    const query = new URL(req.url, redirectUrl).searchParams;
    if (!req.url.startsWith("/callback")) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "text/html" }).end("<p>You may close this window.</p>");
    if (query.get("code")) resolve(query.get("code"));
    else reject(new Error(`the authorization was refused: ${query.get("error")}`));
  });
  listener.listen(Number(port), "127.0.0.1");
});

// The SDK's OAuthClientProvider interface, kept in memory.
class Provider {
  redirectUrl = redirectUrl;
  clientMetadata = {
    client_name: "MCP TypeScript SDK",
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  redirectToAuthorization(authorizationUrl) {
    const browser = spawn(process.env.BROWSER, [authorizationUrl.toString()], {
      stdio: ["ignore", 2, 2],
    });
    browser.on("exit", (status) => {
      if (status !== 0) console.error(`the browser exited with ${status}`);
    });
  }
}

const provider = new Provider();
const client = new Client({ name: "kenning-ts-sdk-test", version: "1.0.0" });

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  try {
    await client.connect(transport);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await transport.finishAuth(await code);
    await connect();
  }
}

const timer = setTimeout(() => {
  console.error("no answer in 90 s");
  process.exit(1);
}, 90_000);
await connect();
const tools = (await client.listTools()).tools.map((tool) => tool.name);
const stored = await client.callTool({ name: "remember", arguments: { content, project } });
const found = await client.callTool({
  name: "recall",
  arguments: { query: question, projects: [project] },
});
console.log(
  JSON.stringify({
    tools,
    stored: stored.structuredContent,
    found: found.structuredContent,
    client: provider.info?.client_name,
    scope: provider.saved?.scope,
  }),
);
await client.close();
listener.close();
clearTimeout(timer);
