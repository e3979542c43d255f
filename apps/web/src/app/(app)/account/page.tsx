import { ArrowLeftIcon } from "lucide-react";
import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { PageHeader } from "@/components/page-header";
import { ThemeToggle } from "@/components/theme-toggle";
import { buttonVariants } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { currentUser } from "@/server/auth";
import { PasswordForm, SignOutButton } from "./password-form";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Account" };

/** The signed-in user's account: password (change, or reset by mail), appearance, sign out. */
export default async function AccountPage() {
  const user = await currentUser();
  if (user === null) redirect("/sign-in?next=/account");
  return (
    <div className="space-y-6">
      <Link href="/" className={buttonVariants({ variant: "ghost", size: "sm", className: "-ml-2" })}>
        <ArrowLeftIcon className="size-4" aria-hidden />
        Workspaces
      </Link>
      <PageHeader title="Account" description={`Signed in as ${user.email}`} />
      <Card>
        <CardHeader>
          <CardTitle>Password</CardTitle>
          <CardDescription>
            Changing it signs out every other session. Forgot the current one?{" "}
            <Link href="/forgot-password" className="font-medium text-foreground underline underline-offset-4">
              Reset it by mail
            </Link>
            .
          </CardDescription>
        </CardHeader>
        <CardContent>
          <PasswordForm />
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Appearance</CardTitle>
          <CardDescription>System follows your device's light or dark setting.</CardDescription>
        </CardHeader>
        <CardContent>
          <ThemeToggle />
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Session</CardTitle>
          <CardDescription>Sign out of the dashboard in this browser.</CardDescription>
        </CardHeader>
        <CardContent>
          <SignOutButton />
        </CardContent>
      </Card>
    </div>
  );
}
