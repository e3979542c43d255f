"use client";
import { LogOutIcon } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { SubmitButton } from "@/components/ui/submit-button";
import { authClient } from "@/lib/auth-client";
import { toast } from "@/lib/toast";

/** Changes the password (the current one first; other sessions are signed out). */
export function PasswordForm() {
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setPending(true);
    setError(null);
    const result = await authClient.changePassword({
      currentPassword: String(form.get("current") ?? ""),
      newPassword: String(form.get("next") ?? ""),
      revokeOtherSessions: true,
    });
    setPending(false);
    if (result.error) {
      setError("Could not change the password: check the current one; the new one needs 8 to 128 characters.");
      return;
    }
    formElement.reset();
    toast.success("Password changed. Other sessions were signed out.");
  }
  return (
    <form method="post" onSubmit={submit} className="grid max-w-sm gap-4">
      <div className="grid gap-2">
        <Label htmlFor="current">Current password</Label>
        <Input id="current" name="current" type="password" required autoComplete="current-password" />
      </div>
      <div className="grid gap-2">
        <Label htmlFor="next">New password</Label>
        <Input
          id="next"
          name="next"
          type="password"
          required
          minLength={8}
          maxLength={128}
          autoComplete="new-password"
          aria-describedby="next-hint"
        />
        <p id="next-hint" className="text-xs text-muted-foreground">
          8 to 128 characters.
        </p>
      </div>
      {error !== null && (
        <p id="password-message" role="alert" className="text-sm text-destructive">
          {error}
        </p>
      )}
      <SubmitButton className="w-fit" disabled={pending} aria-busy={pending}>
        {pending ? "Changing…" : "Change password"}
      </SubmitButton>
    </form>
  );
}

/** Signs out of this browser and goes to the sign-in page. */
export function SignOutButton() {
  return (
    <Button
      variant="outline"
      onClick={async () => {
        await authClient.signOut();
        window.location.assign("/sign-in");
      }}
    >
      <LogOutIcon className="size-4" aria-hidden />
      Sign out
    </Button>
  );
}
