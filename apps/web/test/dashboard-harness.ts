// The dashboard's browser tests' stack: apps/api (with its authorization server and billing
// against the Stripe stand-in) and apps/mcp, the built dashboard (`next start`), Debian's
// Chromium through Playwright; screenshots at 375 and 1440 px with axe-core's checks, saved
// under apps/web/test-results/screenshots.
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createStripe, syncStripe } from "@prim/billing";
import { type StripeStandIn, startStripeStandIn } from "@prim/billing/standin";
import { type MailCapture, startMailCapture } from "@prim/mail";
import { freePort, type OAuthStack, startOAuthStack } from "@prim/testkit/cloud";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright";
import { expect } from "vitest";
import { confirmationLink, startWebServer } from "./web-harness.js";

const WEB_DIR = fileURLToPath(new URL("..", import.meta.url));
const SHOTS = join(WEB_DIR, "test-results", "screenshots");
const CHROMIUM = process.env.PRIM_CHROMIUM ?? "/usr/bin/chromium";
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const WEBHOOK_SECRET = "whsec_e2e_dashboard_billing";

export interface Dashboard {
  web: string;
  stack: OAuthStack;
  standin: StripeStandIn;
  browser: Browser;
  /** The dashboard's mail (its SMTP_URL is this capture). */
  mail: MailCapture;
  /**
   * Opens the confirmation link mailed to `email` in `page` and enters the account's password
   * there (as its owner would): signed in after.
   */
  confirmEmail(page: Page, email: string, password: string): Promise<void>;
  /** A page in a new context signed in as `email`, sent on to the workspace's page. */
  signedIn(context: BrowserContext, email: string, password: string, workspace: string): Promise<Page>;
  stop(): Promise<void>;
}

/**
 * Screenshots at both widths in both colour schemes (`page.emulateMedia`: the theme follows the
 * system while the stored choice is "system", the default), and axe-core's checks of the page in
 * each scheme: no serious or critical violation (labels, names, contrast, landmarks). A page
 * without JavaScript is not checked. Files: `<name>-<light|dark>-<width>.png`.
 */
export async function shoot(
  page: Page,
  name: string,
  options: { axe?: boolean /** default 375 and 1440 */; widths?: number[] } = {},
): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    if (options.axe !== false) {
      // The theme script answers the media change before the next frame; wait for it.
      await page.waitForFunction(
        (dark) =>
          document.documentElement.classList.contains("dark") === dark || localStorage.getItem("prim-theme") !== null,
        scheme === "dark",
      );
      await axeCheck(page, `${name} (${scheme})`);
    }
    for (const width of options.widths ?? [375, 1440]) {
      await page.setViewportSize({ width, height: 900 });
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      const wide = await page.evaluate(() => {
        const w = document.documentElement.clientWidth;
        return [...document.querySelectorAll("body *")]
          .filter((e) => e.getBoundingClientRect().right > w + 1)
          .slice(0, 3)
          .map((e) => `${e.tagName.toLowerCase()} ${e.textContent?.slice(0, 40) ?? ""}`);
      });
      expect(scrollWidth, `${name} at ${width} px is wider than the screen: ${wide.join(" | ")}`).toBeLessThanOrEqual(
        width,
      );
      await page.screenshot({ path: join(SHOTS, `${name}-${scheme}-${width}.png`), fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function axeCheck(page: Page, label: string): Promise<void> {
  // Colours caught mid-transition (a toast stacking, a theme switch) are no contrast: let every
  // finite animation and transition end first (a loading skeleton's pulse never does).
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((a) => Number.isFinite(Number(a.effect?.getComputedTiming().endTime)))
        .map((a) => a.finished.catch(() => undefined)),
    ),
  );
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(): Promise<{
            violations: { id: string; impact: string; help: string; nodes: { target: unknown[] }[] }[];
          }>;
        };
      }
    ).axe;
    return (await axe.run()).violations;
  });
  const serious = found.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(
    serious.map(
      (v) =>
        `${v.id}: ${v.help} (${v.nodes
          .slice(0, 3)
          .map((n) => JSON.stringify(n.target))
          .join(", ")})`,
    ),
    `axe on ${label}`,
  ).toEqual([]);
}

/**
 * Starts the whole stack (label: the test file's database name; `options.env`: more of the api's
 * environment, e.g. `PRIM_WEBHOOKS_LOOPBACK: "allow"` for a receiver on this machine).
 */
export async function startDashboard(
  label: string,
  options: { env?: Record<string, string> } = {},
): Promise<Dashboard> {
  if (!existsSync(join(WEB_DIR, ".next", "BUILD_ID"))) {
    throw new Error("apps/web is not built: run `npm run build` (npm test does it first)");
  }
  if (!existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium`);
  mkdirSync(SHOTS, { recursive: true });
  const standin = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  const stripeEnv = { STRIPE_SECRET_KEY: "sk_test_e2e", STRIPE_API_URL: standin.url };
  // The authorization server needs the dashboard's origin before the dashboard starts.
  const port = await freePort();
  const web = `http://127.0.0.1:${port}`;
  const stack = await startOAuthStack(label, {
    dashboard: web,
    env: { ...stripeEnv, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, ...options.env },
  });
  standin.setWebhookUrl(`${stack.cloud.url}/v1/billing/webhook`);
  await syncStripe(createStripe({ secretKey: stripeEnv.STRIPE_SECRET_KEY, apiUrl: standin.url }));
  // The mail capture, shown on the development mail page as `npm run cloud` does.
  const mail = await startMailCapture({ secret: stack.secret });
  const server = await startWebServer(
    {
      DATABASE_URL: stack.cloud.databaseUrl,
      PRIM_INTERNAL_SECRET: stack.secret,
      PRIM_AUTH_URL: stack.issuer,
      PRIM_INTERNAL_URL: stack.internalUrl,
      PRIM_PUBLIC_API_URL: stack.cloud.url,
      // The MCP origin apps/mcp and the authorization server know (the Connect dialog shows it + /mcp).
      PRIM_PUBLIC_MCP_URL: new URL(stack.mcpUrl).origin,
      SMTP_URL: mail.smtpUrl,
      PRIM_MAIL_CAPTURE_URL: mail.url,
      ...stripeEnv,
    },
    port,
  );
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
  return {
    web,
    stack,
    standin,
    browser,
    signedIn: async (context, email, password, workspace) => {
      const page = await context.newPage();
      await page.goto(`${web}/sign-in?next=${encodeURIComponent(`/w/${workspace}`)}`);
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();
      return page;
    },
    mail,
    confirmEmail: async (page, email, password) => {
      await page.goto(await confirmationLink(mail, email));
      await page.getByLabel("Password").fill(password);
      await page.getByRole("button", { name: "Confirm and sign in" }).click();
    },
    stop: async () => {
      await browser.close();
      await server.stop();
      await stack.stop();
      await standin.close();
      await mail.close();
    },
  };
}
