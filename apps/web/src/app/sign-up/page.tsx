import { AuthPage } from "../sign-in/auth-page";

type Props = { searchParams: Promise<{ next?: string }> };

export default async function SignUpPage({ searchParams }: Props) {
  return <AuthPage mode="sign-up" next={(await searchParams).next} />;
}
