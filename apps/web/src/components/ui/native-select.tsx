import type { ComponentProps } from "react";
import { cn } from "@/lib/utils";
import { fieldClass } from "./input";

/** A styled native `<select>` (works without JavaScript, keyboard and mobile pickers for free). */
export function NativeSelect({ className, ...props }: ComponentProps<"select">) {
  return <select data-slot="native-select" className={cn(fieldClass, "h-9 pr-8", className)} {...props} />;
}
