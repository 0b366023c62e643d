// Home skills may ship an executable helper; project skills never may.
export function run() {
  return "release helper";
}
