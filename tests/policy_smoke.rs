use lisa_context::policy::*;
#[test]
fn t() {
    let p = Policy::builtin();
    match &p {
        Err(e) => {
            let mut s = String::new();
            miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
                .render_report(&mut s, e)
                .unwrap();
            panic!("{s}")
        }
        Ok(p) => println!("{}", p.to_annotated_toml()),
    }
    let bad = PolicySource::from_text(
        Layer::Home,
        "bad.toml",
        "version = 2\n[instructions]\nbudget-bytes = 0\n[skills]\nname-rule = '(['\n[[skills.sources]]\nroot='home'\npath='../x'\nrank=-1\n[[skills.sources]]\nroot='repo'\npath='a'\nrank=5\n[[skills.sources]]\nroot='repo'\npath='b'\nrank=5\n[templates]\nfooter = 'end {path} {nonc}'\n",
    );
    let e = Policy::from_sources(&[PolicySource::builtin(), bad]).unwrap_err();
    let mut s = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .with_width(80)
        .render_report(&mut s, &e)
        .unwrap();
    println!("{s}");
}
