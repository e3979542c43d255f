"use client";
import { useHydrated } from "@/lib/use-hydrated";
import { Button, type ButtonProps } from "./button";

/**
 * A form's submit button for a form that is sent by its JavaScript handler: disabled until
 * React has hydrated the page, since a click before would submit the form natively (a GET of
 * the page with the form's fields in the address) instead of through the handler. A form meant
 * to work without JavaScript (the consent screen) keeps a plain `Button type="submit"`.
 */
export function SubmitButton({ disabled, ...props }: Omit<ButtonProps, "type" | "asChild">) {
  const hydrated = useHydrated();
  return <Button type="submit" disabled={disabled || !hydrated} {...props} />;
}
