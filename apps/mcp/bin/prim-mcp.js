#!/usr/bin/env node
// The cloud's MCP process; built sources in dist/.
import { main } from "../dist/start.js";

await main();
